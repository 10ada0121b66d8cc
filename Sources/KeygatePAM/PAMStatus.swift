/// A Linux-PAM return code (`PAM_SUCCESS`, `PAM_AUTH_ERR`, …), open to codes it has no name for.
public struct PAMStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The numeric code from `<security/_pam_types.h>`.
    public let rawValue: Int32

    /// Wraps a code.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Success.
    public static let success = PAMStatus(rawValue: 0)
    /// A dynamically loaded module failed to open.
    public static let openError = PAMStatus(rawValue: 1)
    /// A symbol was not found.
    public static let symbolError = PAMStatus(rawValue: 2)
    /// The service module failed.
    public static let serviceError = PAMStatus(rawValue: 3)
    /// A system error.
    public static let systemError = PAMStatus(rawValue: 4)
    /// A memory buffer error.
    public static let bufferError = PAMStatus(rawValue: 5)
    /// Permission denied (from account management: the service is not allowed for the user).
    public static let permissionDenied = PAMStatus(rawValue: 6)
    /// Authentication failure.
    public static let authError = PAMStatus(rawValue: 7)
    /// Insufficient credentials to access authentication data.
    public static let credentialsInsufficient = PAMStatus(rawValue: 8)
    /// The authentication service cannot retrieve authentication information.
    public static let authInfoUnavailable = PAMStatus(rawValue: 9)
    /// The user is not known to the module.
    public static let userUnknown = PAMStatus(rawValue: 10)
    /// The maximum number of retries was reached.
    public static let maxTries = PAMStatus(rawValue: 11)
    /// A new authentication token is required (password change).
    public static let newAuthTokenRequired = PAMStatus(rawValue: 12)
    /// The account has expired.
    public static let accountExpired = PAMStatus(rawValue: 13)
    /// A conversation error.
    public static let conversationError = PAMStatus(rawValue: 19)
    /// An authentication-token manipulation error (pam_unix reports a cancelled prompt so).
    public static let authTokenError = PAMStatus(rawValue: 20)
    /// Ignore this module.
    public static let ignore = PAMStatus(rawValue: 25)
    /// Critical error: abort (for example no service file and no `other`).
    public static let abort = PAMStatus(rawValue: 26)
    /// The authentication token has expired.
    public static let authTokenExpired = PAMStatus(rawValue: 27)
    /// A module is not known.
    public static let moduleUnknown = PAMStatus(rawValue: 28)
    /// A bad item was passed to pam_*_item().
    public static let badItem = PAMStatus(rawValue: 29)

    private static let names: [Int32: String] = [
        0: "PAM_SUCCESS", 1: "PAM_OPEN_ERR", 2: "PAM_SYMBOL_ERR", 3: "PAM_SERVICE_ERR", 4: "PAM_SYSTEM_ERR",
        5: "PAM_BUF_ERR", 6: "PAM_PERM_DENIED", 7: "PAM_AUTH_ERR", 8: "PAM_CRED_INSUFFICIENT",
        9: "PAM_AUTHINFO_UNAVAIL", 10: "PAM_USER_UNKNOWN", 11: "PAM_MAXTRIES", 12: "PAM_NEW_AUTHTOK_REQD",
        13: "PAM_ACCT_EXPIRED", 14: "PAM_SESSION_ERR", 15: "PAM_CRED_UNAVAIL", 16: "PAM_CRED_EXPIRED",
        17: "PAM_CRED_ERR", 18: "PAM_NO_MODULE_DATA", 19: "PAM_CONV_ERR", 20: "PAM_AUTHTOK_ERR",
        21: "PAM_AUTHTOK_RECOVERY_ERR", 22: "PAM_AUTHTOK_LOCK_BUSY", 23: "PAM_AUTHTOK_DISABLE_AGING",
        24: "PAM_TRY_AGAIN", 25: "PAM_IGNORE", 26: "PAM_ABORT", 27: "PAM_AUTHTOK_EXPIRED", 28: "PAM_MODULE_UNKNOWN",
        29: "PAM_BAD_ITEM", 30: "PAM_CONV_AGAIN", 31: "PAM_INCOMPLETE",
    ]

    /// The symbolic name, such as `PAM_AUTH_ERR`.
    public var name: String { Self.names[rawValue] ?? "PAM_\(rawValue)" }

    /// `PAM_AUTH_ERR 7`.
    public var description: String { "\(name) \(rawValue)" }
}
