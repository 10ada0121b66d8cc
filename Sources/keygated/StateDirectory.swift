import Glibc

/// The daemon's state directory: `DIR/users/<uid>/` per caller, each created by the daemon,
/// owned by it and mode 0700 (so no caller can list, read or write any of it); the caller's
/// store is `items.db` (and its `.key`) inside, its audit trail `audit.jsonl` (and its `.head`).
struct StateDirectory: Sendable {
    let path: String

    /// Checks (creating when missing) `path` and `path/users`: both must be directories owned by
    /// the daemon's user and not writable by group or others; `users` is made 0700.
    /// - Throws: ``StartupError`` naming the directory and the fix.
    init(path: String) throws(StartupError) {
        self.path = path
        try Self.ensureDirectory(path, mode: 0o700, strict: false)
        try Self.ensureDirectory(path + "/users", mode: 0o700, strict: true)
    }

    /// The path of `uid`'s directory (``userDirectory(_:)`` makes it).
    func userDirectoryPath(_ uid: UInt32) -> String { "\(path)/users/\(uid)" }

    /// The directory of `uid`, created 0700 when missing and checked every time.
    func userDirectory(_ uid: UInt32) throws(StartupError) -> String {
        let directory = userDirectoryPath(uid)
        try Self.ensureDirectory(directory, mode: 0o700, strict: true)
        return directory
    }

    /// A directory owned by the daemon's user, not a symlink, not writable by others; with
    /// `strict`, exactly `mode`.
    private static func ensureDirectory(_ path: String, mode: mode_t, strict: Bool) throws(StartupError) {
        if mkdir(path, mode) != 0 && errno != EEXIST {
            throw StartupError("\(path): cannot be created (errno \(errno))")
        }
        var info = stat()
        guard lstat(path, &info) == 0 else { throw StartupError("\(path): cannot be read (errno \(errno))") }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw StartupError("\(path): is not a directory") }
        guard info.st_uid == geteuid() else {
            throw StartupError("\(path): belongs to uid \(info.st_uid), not to the daemon's user \(geteuid())")
        }
        if strict && info.st_mode & 0o7777 != mode {
            guard chmod(path, mode) == 0 else { throw StartupError("\(path): cannot be made private") }
        } else if info.st_mode & 0o022 != 0 {
            throw StartupError("\(path): is writable by group or others; make it 0700 or 0755")
        }
    }
}
