import Glibc
public import KeygatePolicy

/// The account that owns this process: the only account Keygate proves presence for, except
/// in a broker that names its peer's account (``userName(of:)``, `PAMAuthenticator`'s `user:`).
///
/// Resolved from the effective uid with `getpwuid_r`, never from a name a caller passes or
/// from `$USER`, so proving another account's password cannot unlock this user's items.
public enum ProcessOwner {
    /// The effective user's login name.
    /// - Throws: ``KeygatePolicy/KeygateError`` with `errSecNotAvailable` when the uid has no passwd
    ///   entry (cause ``KeygatePolicy/KeygateError/Condition/noAccount``) or the lookup failed (its `errno`).
    public static func userName() throws(KeygateError) -> String {
        try userName(of: geteuid())
    }

    /// The login name of `uid` (`getpwuid_r`), for a broker that authenticates its peer's account.
    /// - Throws: ``KeygatePolicy/KeygateError`` with `errSecNotAvailable` when `uid` has no passwd
    ///   entry (cause ``KeygatePolicy/KeygateError/Condition/noAccount``) or the lookup failed (its `errno`).
    public static func userName(of uid: UInt32) throws(KeygateError) -> String {
        var record = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var size = max(sysconf(Int32(_SC_GETPW_R_SIZE_MAX)), 1024)
        while true {
            var buffer = [CChar](repeating: 0, count: size)
            let code = getpwuid_r(uid, &record, &buffer, buffer.count, &found)
            if code == ERANGE && size < 1 << 20 {
                size *= 2
                continue
            }
            guard code == 0 else {
                throw KeygateError(
                    .notAvailable, "cannot look up uid \(uid): \(String(cString: strerror(code)))", cause: .errno(code))
            }
            guard found != nil, let name = record.pw_name else {
                throw KeygateError(.notAvailable, "no passwd entry for uid \(uid)", condition: .noAccount)
            }
            return String(cString: name)
        }
    }
}
