/// A failure with the Apple status code it maps to and a message for people.
///
/// Every throwing API of Keygate throws this type, so callers can branch on
/// ``status`` and show ``message``. Messages never contain secret bytes.
///
/// Two errors are equal when their statuses are: the message is for people, so a test can
/// expect `KeygateError(.itemNotFound, "")` whatever the message says, and `catch` clauses can
/// match a status directly (`catch KeygateStatus.itemNotFound`).
public struct KeygateError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The Apple-compatible status code.
    public let status: KeygateStatus
    /// A readable explanation naming what was wrong (never a secret).
    public let message: String

    /// Creates an error with a status and a message.
    public init(_ status: KeygateStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    /// `message (errSecName number)`, the form the CLI prints.
    public var description: String { "\(message) (\(status))" }

    /// Equal when the statuses are equal; the messages may differ.
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
