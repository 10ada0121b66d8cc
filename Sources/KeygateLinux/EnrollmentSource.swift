import FoundationEssentials
import Glibc
import KeygatePolicy

/// Where Keygate learns the enrolled biometric set, and the one rule it keeps: only a
/// readable, non-empty set from a trusted source is biometry. Anything else (a missing,
/// unreadable or empty file, something that is not a regular file, a file someone other than
/// the reading user or root could write, an fprintd that cannot be reached, fails or prints
/// what it does not understand, nothing enrolled) is *biometry unavailable*: reads that need
/// biometry are refused and fallbacks such as the passcode still work, but no
/// `biometryCurrentSet` item is ever invalidated on it. Invalidation needs positive evidence:
/// a readable, non-empty set whose hash differs from the one the item was bound to.
///
/// The source is chosen the same way on every run, so two sources never disagree about one
/// item: `KEYGATE_ENROLLMENT_FILE` when it is set, else fprintd over D-Bus (``FprintdEnrollment``;
/// a bus without fprintd is none).
enum EnrollmentSource {
    /// What a source said.
    enum Reading: Equatable {
        /// A readable, non-empty enrolled set.
        case enrolled(EnrollmentSetHash)
        /// Biometry cannot be used now; `why` says what went wrong, for a warning.
        case unavailable(why: String?)
    }

    /// The largest enrollment file read (one template id a line needs far less).
    static let maximumFileBytes = 1 << 20

    /// Reads the configured source once; fprintd is asked about `user`'s fingers (a uid).
    static func read(sources: DeviceSources, user: uid_t) -> Reading {
        if let path = sources.enrollmentFile { return file(path) }
        return FprintdEnrollment.read(bus: sources.busAddress, user: user)
    }

    /// The enrollment file: one template id a line, `#` starts a comment line. It is opened
    /// without blocking (a FIFO or device never hangs keygate) and without following a symbolic
    /// link, and is trusted only when it is a regular file that belongs to the reading user (this
    /// process's effective user) or root and that group and others cannot write
    /// (``TrustedWriters``): anyone else who could write it could change the set and so
    /// invalidate every `biometryCurrentSet` item. A file that fails any of this, or that does
    /// not parse, is *unavailable* with a reason naming the file, never a changed set.
    static func file(_ path: String) -> Reading {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW)
        guard descriptor >= 0 else {
            let code = errno
            let reason = code == ELOOP ? "it is a symbolic link" : String(cString: strerror(code))
            return .unavailable(why: "cannot open the enrollment file \(path): \(reason)")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            return .unavailable(why: "the enrollment file \(path) is not a regular file")
        }
        guard TrustedWriters.only([0, geteuid()], canWrite: status) else {
            let mode = String(status.st_mode & 0o7777, radix: 8)
            return .unavailable(
                why: "the enrollment file \(path) (uid \(status.st_uid), mode \(mode)) is not trusted: it must "
                    + "belong to uid \(geteuid()) or root and not be writable by group or others")
        }
        guard status.st_size <= maximumFileBytes else {
            return .unavailable(why: "the enrollment file \(path) is larger than \(maximumFileBytes) bytes")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while bytes.count <= maximumFileBytes {
            let got = Glibc.read(descriptor, &chunk, chunk.count)
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { return .unavailable(why: "cannot read the enrollment file \(path)") }
            if got == 0 { break }
            bytes += chunk[0..<got]
        }
        guard bytes.count <= maximumFileBytes else {
            return .unavailable(why: "the enrollment file \(path) is larger than \(maximumFileBytes) bytes")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return .unavailable(why: "the enrollment file \(path) is not UTF-8 text")
        }
        let ids = text.split(whereSeparator: \.isNewline).map { $0.trimmingWhitespace }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        guard let hash = EnrollmentSetHash(templateIDs: ids) else {
            return .unavailable(why: "the enrollment file \(path) names no template")
        }
        return .enrolled(hash)
    }
}
