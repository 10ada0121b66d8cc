import Glibc
import Keygate
import KeygateLinux
import KeygatePolicy
import KeygateServing

/// The organisation rules and access-group grants the daemon applies (`policies = PATH` in its
/// configuration): loaded once at start from root-owned files, matched against the caller's
/// executable as the kernel reports it (``PeerIdentity/executable``). A client's hello names
/// the groups it asks for; a grant of a group to other programs refuses it, as in embedded mode.
enum DaemonPolicies {
    /// The rules at `path` (a directory of `.policy` files or one file); empty when nil.
    /// - Throws: ``StartupError`` when the path is missing (a configured path that holds no
    ///   rules would switch every grant off unnoticed: a mistyped or unmounted path stops the
    ///   daemon instead), when it, a file in it or its directory may be written by anyone but
    ///   the daemon's user, or a file does not load (naming `file:line:column`).
    static func load(_ path: String?) throws(StartupError) -> PolicySet {
        guard let path else { return .empty }
        let info = try checkOwned(path, isSetting: true)
        let files: [String]
        do {
            files = info.st_mode & S_IFMT == S_IFDIR ? try PolicyDirectory.files(in: path) : [path]
        } catch {
            throw StartupError("\(path): \(error.message)")
        }
        for file in files { try checkOwned(file) }
        do {
            return try PolicyDirectory.load(files)
        } catch {
            throw StartupError(error.message)
        }
    }

    /// `path` (symbolic links not followed) belongs to the daemon's user and is writable by no
    /// one else. The path the setting names (`isSetting`) is said to be missing when it is.
    @discardableResult
    private static func checkOwned(_ path: String, isSetting: Bool = false) throws(StartupError) -> stat {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            guard isSetting, errno == ENOENT else { throw StartupError("\(path): cannot be read (errno \(errno))") }
            throw StartupError(
                "\(path): no such policy directory or file (the policies setting names it): create it, "
                    + "or remove the setting to run without organisation rules and grants")
        }
        guard TrustedWriters.only([geteuid()], canWrite: info) else {
            throw StartupError("\(path): must belong to the daemon's user and not be writable by group or others")
        }
        return info
    }
}
