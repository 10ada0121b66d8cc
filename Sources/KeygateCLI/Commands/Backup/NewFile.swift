import Glibc
import KeygateItems
import KeygatePolicy

/// Creates a file that must not exist yet, whole or not at all: the bytes go to a private
/// temporary file beside it (`O_EXCL`, 0600), are synced, and are then published under the
/// final name with `link`, which never replaces an existing file; the directory is synced
/// after. On any failure the temporary file is removed, so nothing half-written is left behind
/// and a retry is not refused.
enum NewFile {
    /// Writes `bytes` to the new file `path`.
    /// - Throws: `errSecIO` naming `path` and the errno's text: it exists already, or it could
    ///   not be written, synced or published.
    static func create(_ path: String, bytes: [UInt8]) throws(KeygateError) {
        func failure(_ action: String, _ code: Int32, _ note: String = "") -> KeygateError {
            KeygateError(
                .io, "cannot \(action) \(path): \(String(cString: strerror(code)))\(note)", cause: .errno(code))
        }
        let existing = " (an existing file is never overwritten)"
        var status = stat()
        if lstat(path, &status) == 0 { throw failure("create", EEXIST, existing) }
        var template = Array((path + ".tmp-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw failure("create", errno) }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var published = false
        defer { if !published { unlink(temporary) } }
        var code = write(descriptor, bytes)
        if code == 0, fsync(descriptor) != 0 { code = errno }
        if close(descriptor) != 0, code == 0 { code = errno }
        guard code == 0 else { throw failure("write", code) }
        guard link(temporary, path) == 0 else {
            let code = errno
            throw failure("create", code, code == EEXIST ? existing : "")
        }
        published = true
        unlink(temporary)
        guard PrivateFile.syncDirectory(of: path) else {
            let problem = errno
            unlink(path)
            throw failure("sync the directory of", problem)
        }
    }

    /// Writes all of `bytes` (retrying short writes and interruptions); 0 or the errno.
    private static func write(_ descriptor: Int32, _ bytes: [UInt8]) -> Int32 {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return written < 0 ? errno : EIO }
                offset += written
            }
            return 0
        }
    }
}
