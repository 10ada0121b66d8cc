/// A failure with the Apple status code it maps to, a message for people, and the underlying
/// cause when there is one.
///
/// Every throwing API of Keygate throws this type, so callers can branch on ``status`` and
/// show ``message``. Messages never contain secret bytes.
///
/// Two errors are equal when their statuses are: the message is for people and the cause for
/// programs that need to tell failures with one status apart, so a test can expect
/// `KeygateError(.itemNotFound, "")` whatever the message or cause, and `catch` clauses can match
/// a status directly (`catch KeygateStatus.itemNotFound`).
///
/// The ``cause`` says what went wrong underneath, as GRDB's `DatabaseError` keeps SQLite's
/// extended result code: an SQLite result code, a PAM status, an `errno`, a libsodium failure,
/// or a named Keygate condition. Match it with a `catch` pattern or a `switch`:
///
/// ```swift
/// do {
///     try keychain.update(query, attributes: changes)
/// } catch KeygateError.Condition.racingWriter {
///     // read again and retry
/// } catch SQLiteResultCode.busy {
///     // another process held the database longer than the busy timeout
/// }
/// if case .errno(let code)? = error.cause { … }
/// ```
public struct KeygateError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The Apple-compatible status code.
    public let status: KeygateStatus
    /// A readable explanation naming what was wrong (never a secret).
    public let message: String
    /// What failed underneath, or nil when the status says it all (a bad parameter, no such item).
    public let cause: Cause?

    /// Creates an error with a status, a message and, optionally, its underlying cause.
    public init(_ status: KeygateStatus, _ message: String, cause: Cause? = nil) {
        self.status = status
        self.message = message
        self.cause = cause
    }

    /// `message (errSecName number)`, the form the CLI prints.
    public var description: String { "\(message) (\(status))" }

    /// Equal when the statuses are equal; the messages and causes may differ.
    public static func == (lhs: KeygateError, rhs: KeygateError) -> Bool { lhs.status == rhs.status }

    /// Hashes the status only, consistent with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) { hasher.combine(status) }
}

extension KeygateStatus {
    /// Matches an error with this status: `catch KeygateStatus.itemNotFound { … }`, or
    /// `case .userCanceled = error.status` without the pattern.
    public static func ~= (status: KeygateStatus, error: any Error) -> Bool {
        (error as? KeygateError)?.status == status
    }

    /// Matches a ``KeygateError`` with this status (for typed throws).
    public static func ~= (status: KeygateStatus, error: KeygateError) -> Bool {
        error.status == status
    }
}
