/// A failure with the Apple status code it maps to and a message for people.
///
/// Every throwing API of Keygate throws this type, so callers can branch on
/// ``status`` and show ``message``. Messages never contain secret bytes.
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
}
