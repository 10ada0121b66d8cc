extension KeygateError {
    /// What failed underneath a ``KeygateError``: the C library's own code, or a named
    /// condition of Keygate's. The status says what a caller of the Apple API sees; the cause
    /// says which of the failures behind that status it was.
    public enum Cause: Hashable, Sendable, CustomStringConvertible {
        /// SQLite refused: its extended result code (the primary code is ``SQLiteResultCode/primary``).
        case sqlite(SQLiteResultCode)
        /// A PAM call returned this status (`PAM_SYSTEM_ERR`, …; KeygatePAM's `PAMStatus` names it).
        case pam(Int32)
        /// A system call failed with this `errno`.
        case errno(Int32)
        /// A libsodium call failed: the function's name and its return value.
        case sodium(function: String, result: Int32)
        /// A libcrypto (OpenSSL) call failed: the function's name and OpenSSL's packed error code
        /// (`ERR_get_error`, 0 when it queued none).
        case libcrypto(function: String, error: UInt64)
        /// A condition Keygate detects itself (a racing writer, a file that is not private, …).
        case condition(Condition)

        /// `SQLite 5 (SQLITE_BUSY)`, `PAM 4`, `errno 13`, `crypto_pwhash -1`, or the condition's name.
        public var description: String {
            switch self {
            case .sqlite(let code): "SQLite \(code)"
            case .pam(let status): "PAM \(status)"
            case .errno(let code): "errno \(code)"
            case .sodium(let function, let result): "\(function) \(result)"
            case .libcrypto(let function, let error): "\(function) error 0x\(String(error, radix: 16))"
            case .condition(let condition): condition.rawValue
            }
        }
    }

    /// The named condition behind this error, if its cause is one.
    public var condition: Condition? {
        if case .condition(let condition)? = cause { condition } else { nil }
    }

    /// The SQLite result code behind this error, if its cause is one.
    public var sqliteCode: SQLiteResultCode? {
        if case .sqlite(let code)? = cause { code } else { nil }
    }

    /// The `errno` behind this error, if its cause is one.
    public var errnoCode: Int32? {
        if case .errno(let code)? = cause { code } else { nil }
    }

    /// An error with this status and message whose cause is a named condition.
    public init(_ status: KeygateStatus, _ message: String, condition: Condition) {
        self.init(status, message, cause: .condition(condition))
    }
}
