package import Glibc
package import KeygatePolicy

/// Opens and inspects the store's and the trail's files safely: never following a symbolic
/// link, never blocking on a FIFO or device (`O_NONBLOCK`, then a regular file is required),
/// and, under ``FilePrivacy/ownerOnly``, only files and directories that belong to the
/// effective user and that no one else can write (files 0600 or tighter).
package enum PrivateFile {
    /// Opens `path` with `flags` (plus `O_NONBLOCK`, `O_NOFOLLOW`, `O_CLOEXEC`) and checks it.
    /// - Returns: the descriptor, or nil when the file does not exist (and `flags` lacks `O_CREAT`).
    /// - Throws: `status` naming the path and the fix.
    package static func open(
        _ path: String, flags: Int32, privacy: FilePrivacy, status: KeygateStatus
    ) throws(KeygateError) -> Int32? {
        let descriptor = Glibc.open(path, flags | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT && flags & O_CREAT == 0 { return nil }
            if code == ELOOP {
                throw KeygateError(
                    status, "\(path) is a symbolic link; refusing to follow it", condition: .notRegularFile)
            }
            if code == ENXIO {
                throw KeygateError(
                    status, "\(path) is not a regular file (a FIFO); refusing to use it", condition: .notRegularFile)
            }
            throw KeygateError(status, "cannot open \(path): \(String(cString: strerror(code)))", cause: .errno(code))
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            close(descriptor)
            throw KeygateError(
                status, "cannot inspect \(path): \(String(cString: strerror(code)))", cause: .errno(code))
        }
        do {
            try check(info, path: path, privacy: privacy, status: status)
        } catch {
            close(descriptor)
            throw error
        }
        return descriptor
    }

    /// Checks an existing file without opening it (`lstat`).
    /// - Returns: its status, or nil when it does not exist.
    @discardableResult
    package static func inspect(_ path: String, privacy: FilePrivacy, status: KeygateStatus) throws(KeygateError)
        -> stat?
    {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let code = errno
            if code == ENOENT { return nil }
            throw KeygateError(
                status, "cannot inspect \(path): \(String(cString: strerror(code)))", cause: .errno(code))
        }
        try check(info, path: path, privacy: privacy, status: status)
        return info
    }

    /// Checks the directory holding `path`: the effective user's, and not writable by others.
    package static func checkDirectory(of path: String, privacy: FilePrivacy, status: KeygateStatus)
        throws(KeygateError)
    {
        guard privacy == .ownerOnly else { return }
        let directory = directoryName(of: path)
        var info = stat()
        guard stat(directory, &info) == 0 else {
            // A missing directory holds no file to trust or distrust; creating one in it fails on its own.
            let code = errno
            if code == ENOENT { return }
            throw KeygateError(
                status, "cannot inspect \(directory): \(String(cString: strerror(code)))", cause: .errno(code))
        }
        let user = geteuid()
        guard info.st_uid == user else {
            throw KeygateError(
                status,
                "the directory \(directory) belongs to uid \(info.st_uid), not to you (uid \(user)): another user "
                    + "could replace the files in it; use a directory of your own (or chown \(user) \(directory))",
                condition: .wrongOwner)
        }
        guard info.st_mode & 0o022 == 0 else {
            throw KeygateError(
                status,
                "the directory \(directory) is writable by other users (mode \(octal(info.st_mode))): they could "
                    + "replace the files in it; chmod 700 \(directory)",
                condition: .notPrivate)
        }
    }

    /// Makes the directory entry of a file just created at `path` durable (`fsync` of its
    /// directory), so a power loss cannot lose the file whose contents were synced.
    /// - Returns: false when the directory could not be opened or synced (`errno` says why).
    @discardableResult
    package static func syncDirectory(of path: String) -> Bool {
        let handle = Glibc.open(directoryName(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard handle >= 0 else { return false }
        defer { close(handle) }
        return fsync(handle) == 0
    }

    /// The directory part of `path` ("." for a bare name).
    package static func directoryName(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    /// Checks a file's status (from `stat`, `lstat` or `fstat`): a regular file and, under
    /// ``FilePrivacy/ownerOnly``, the effective user's own and private.
    package static func check(
        _ info: stat, path: String, privacy: FilePrivacy, status: KeygateStatus
    ) throws(KeygateError) {
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw KeygateError(
                status, "\(path) is not a regular file (\(kind(info.st_mode))); refusing to use it",
                condition: .notRegularFile)
        }
        guard privacy == .ownerOnly else { return }
        let user = geteuid()
        guard info.st_uid == user else {
            throw KeygateError(
                status,
                "\(path) belongs to uid \(info.st_uid), not to you (uid \(user)): another user could have planted "
                    + "or read it; check it, then remove it or chown \(user) \(path)",
                condition: .wrongOwner)
        }
        guard info.st_mode & 0o077 == 0 else {
            throw KeygateError(
                status,
                "\(path) is readable or writable by other users (mode \(octal(info.st_mode))); chmod 600 \(path)",
                condition: .notPrivate)
        }
    }

    private static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFDIR: "a directory"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "not a plain file"
        }
    }

    package static func octal(_ mode: mode_t) -> String { String(mode & 0o777, radix: 8) }
}
