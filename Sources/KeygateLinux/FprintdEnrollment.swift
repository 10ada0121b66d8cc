internal import CSystemd
import Glibc
import KeygatePAM
import KeygatePolicy

/// The fingers enrolled with fprintd, asked over D-Bus (sd-bus) in process, as `fprintd-list`
/// asks: every reader's name and scan type, and the fingers this user enrolled on it. No
/// subprocess, and one deadline for the whole question.
enum FprintdEnrollment {
    /// The whole question (connect, authenticate, every call) ends within this by default: 250 ms.
    static let timeoutMicroseconds: UInt64 = 250_000

    /// D-Bus error replies that mean "no fprintd here": biometry unavailable, nothing to warn about.
    static let absentErrors: Set<String> = [
        "org.freedesktop.DBus.Error.ServiceUnknown",
        "org.freedesktop.DBus.Error.NameHasNoOwner",
        "org.freedesktop.DBus.Error.UnknownObject",
    ]

    /// The enrolled set as fprintd on the bus at `address` tells it for `user` (a uid: the process owner in embedded mode, the caller in keygated,
    /// never the daemon's own root). Only a non-empty set is `.enrolled`; no bus,
    /// no fprintd, no reader or no finger is unavailable without a warning, and a bus or fprintd
    /// that fails or does not answer in time is unavailable with one.
    static func read(bus address: String, user uid: uid_t, timeout: UInt64 = timeoutMicroseconds)
        -> EnrollmentSource.Reading
    {
        // getpwuid_r: keygated asks from many threads.
        guard let user = try? ProcessOwner.userName(of: uid) else {
            return .unavailable(why: "no passwd entry for uid \(uid) to ask fprintd about")
        }
        var answer = keygate_fprintd_answer()
        defer { keygate_fprintd_answer_free(&answer) }
        let result = keygate_fprintd_fingers(address, user, timeout, &answer)
        let errorName = withUnsafeBytes(of: &answer.error_name) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        guard result == 0, let listing = answer.listing else {
            if errorName.isEmpty && result == -ENOENT { return .unavailable(why: nil) }  // no system bus
            if absentErrors.contains(errorName) || errorName.hasPrefix(LogindSession.activationFailurePrefix) {
                return .unavailable(why: nil)
            }
            let reason = errorName.isEmpty ? String(cString: strerror(-result)) : errorName
            return .unavailable(why: "cannot ask fprintd for the enrolled fingers (\(reason))")
        }
        return enrolledSet(String(cString: listing))
    }

    /// The set in the shim's listing (`D<reader>` lines, each followed by its `F<finger>` lines).
    /// A finger is named `<reader>:/<finger>`, the reader as `fprintd-list` prints it
    /// (`<name> (<scan-type>)`), so the hash is the one earlier versions read from `fprintd-list`.
    static func enrolledSet(_ listing: String) -> EnrollmentSource.Reading {
        var reader: String?
        var fingers: [String] = []
        for line in listing.split(separator: "\n") {
            if line.hasPrefix("D") {
                reader = String(line.dropFirst()) + ":"
            } else if line.hasPrefix("F"), let reader {
                let finger = line.dropFirst().trimmingWhitespace
                guard !finger.isEmpty else { return .unavailable(why: "fprintd named an empty finger") }
                fingers.append(reader + "/" + finger)
            } else {
                return .unavailable(why: "fprintd gave an answer keygate does not understand")
            }
        }
        guard let hash = EnrollmentSetHash(templateIDs: fingers) else {
            return .unavailable(why: nil)  // nothing enrolled: no evidence of a change, and nothing to warn about
        }
        return .enrolled(hash)
    }
}
