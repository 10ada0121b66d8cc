import Foundation
import KeygatePolicy

/// Where Keygate learns the enrolled biometric set, and the one rule it keeps: only a
/// readable, non-empty set is biometry. Anything else (a missing, unreadable or empty file,
/// something that is not a regular file, an fprintd that cannot be reached, fails or prints
/// what it does not understand, nothing enrolled) is *biometry unavailable*: reads that need
/// biometry are refused and fallbacks such as the passcode still work, but no
/// `biometryCurrentSet` item is ever invalidated on it. Invalidation needs positive evidence:
/// a readable, non-empty set whose hash differs from the one the item was bound to.
///
/// The source is chosen the same way on every run, so two sources never disagree about one
/// item: `KEYGATE_ENROLLMENT_FILE` when it is set, else fprintd when `fprintd-list` is
/// installed, else none.
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

    /// Reads the configured source once.
    static func read(environment: [String: String] = ProcessInfo.processInfo.environment) -> Reading {
        if let path = environment["KEYGATE_ENROLLMENT_FILE"], !path.isEmpty {
            return file(path)
        }
        if let fprintd = Subprocess.which("fprintd-list", environment: environment) {
            guard let user = Subprocess.currentUserName() else {
                return .unavailable(why: "no passwd entry to ask fprintd about")
            }
            guard let output = Subprocess.run(fprintd, [user]) else {
                return .unavailable(why: "fprintd-list failed or did not answer")
            }
            return fprintdListing(output)
        }
        return .unavailable(why: nil)
    }

    /// The enrollment file: one template id a line, `#` starts a comment line. It is opened
    /// without blocking (a FIFO or device never hangs keygate) and must be a regular file.
    static func file(_ path: String) -> Reading {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            return .unavailable(why: "cannot open the enrollment file \(path): \(reason)")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            return .unavailable(why: "the enrollment file \(path) is not a regular file")
        }
        guard status.st_size <= maximumFileBytes else {
            return .unavailable(why: "the enrollment file \(path) is larger than \(maximumFileBytes) bytes")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while bytes.count <= maximumFileBytes {
            let got = Foundation.read(descriptor, &chunk, chunk.count)
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
        let ids = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        guard let hash = EnrollmentSetHash(templateIDs: ids) else {
            return .unavailable(why: "the enrollment file \(path) names no template")
        }
        return .enrolled(hash)
    }

    /// `fprintd-list USER`'s output: the fingers per reader. Every line must be one fprintd
    /// prints; anything else, or no finger at all, is unavailable.
    static func fprintdListing(_ output: String) -> Reading {
        var device: String?
        var fingers: [String] = []
        for raw in output.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            // The reader's name as printed after " on " (colon included), as earlier versions
            // hashed it, so items bound then keep their hash.
            if line.isEmpty || line.hasPrefix("found ") || line.hasPrefix("Device at ")
                || line.hasPrefix("Using device ")
            {
                continue
            }
            if line.hasPrefix("Fingerprints for user "), line.hasSuffix(":"), let on = raw.range(of: " on ") {
                device = String(raw[on.upperBound...])
            } else if line.hasPrefix("User "), line.contains(" has no fingers enrolled") {
                device = nil
            } else if line.hasPrefix("- #"), let colon = line.range(of: ": "), let device {
                let finger = line[colon.upperBound...].trimmingCharacters(in: .whitespaces)
                guard !finger.isEmpty else { return .unavailable(why: "fprintd-list printed an empty finger name") }
                fingers.append(device + "/" + finger)
            } else if line.contains("No devices available") {
                return .unavailable(why: nil)  // no reader: as on a machine without fprintd
            } else {
                return .unavailable(why: "fprintd-list printed a line keygate does not understand")
            }
        }
        guard let hash = EnrollmentSetHash(templateIDs: fingers) else {
            return .unavailable(why: nil)  // nothing enrolled: no evidence of a change, and nothing to warn about
        }
        return .enrolled(hash)
    }
}
