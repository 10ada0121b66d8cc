package import FoundationEssentials
import Glibc
package import KeygatePolicy

/// A small JSON file shared by concurrent invocations: every read-modify-write happens under
/// an exclusive `flock` on `<path>.lock`, and replaces the file atomically (0600).
package struct LockedFile {
    package let path: String

    /// The file at `path` (its lock is `<path>.lock`).
    package init(path: String) { self.path = path }

    /// Runs `body` with the exclusive lock held; `body` must not wait for a person.
    package func withLock<T>(_ body: () throws -> T) throws -> T {
        let descriptor = open(path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            throw KeygateError(.io, "cannot open \(path).lock: \(String(cString: strerror(code)))", cause: .errno(code))
        }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX) == 0 else {
            let code = errno
            throw KeygateError(.io, "cannot lock \(path).lock: \(String(cString: strerror(code)))", cause: .errno(code))
        }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    /// The file's contents, or nil when it does not exist. A file owned by someone else or
    /// readable by others is not trusted; one that cannot be examined or read is an error.
    package func read() throws(KeygateError) -> Data? {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            let code = errno
            if code == ENOENT { return nil }
            throw KeygateError(.io, "cannot examine \(path): \(String(cString: strerror(code)))", cause: .errno(code))
        }
        let condition: KeygateError.Condition? =
            (status.st_mode & S_IFMT) != S_IFREG
            ? .notRegularFile
            : status.st_uid != geteuid() ? .wrongOwner : status.st_mode & 0o077 != 0 ? .notPrivate : nil
        if let condition {
            throw KeygateError(.io, "\(path) is not a private file of this user; not trusting it", condition: condition)
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw KeygateError(.io, "cannot read \(path)")
        }
        return data
    }

    /// Replaces the file's contents atomically; `durably`, the new contents reach the disk
    /// (`fsync`) before they replace the old.
    package func write(_ data: Data, durably: Bool = false) throws(KeygateError) {
        let temporary = path + ".\(getpid()).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            throw KeygateError(
                .io, "cannot write \(temporary): \(String(cString: strerror(code)))", cause: .errno(code))
        }
        let written = data.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        var writeError = written < 0 ? errno : written != data.count ? ENOSPC : 0
        if writeError == 0, durably, fsync(descriptor) != 0 { writeError = errno }
        let closed = close(descriptor) == 0
        guard writeError == 0, closed, rename(temporary, path) == 0 else {
            let code = writeError != 0 ? writeError : errno
            // Best effort: the temporary file is ours and useless now.
            _ = unlink(temporary)
            throw KeygateError(.io, "cannot replace \(path): \(String(cString: strerror(code)))", cause: .errno(code))
        }
    }
}
