/// A policy file that cannot be used: a syntax error or an invalid rule, at a line and column.
///
/// Its ``description`` reads `bank.policy:3:22: expected an operation (add, read, …), found 'raed'`,
/// so an operator can fix the file from the message alone. Loading fails as a whole on one.
public struct PolicyParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Where the problem is.
    public let location: SourceLocation
    /// What was wrong: for a syntax error, what was expected and what was found.
    public let message: String

    /// An error at `location`.
    public init(_ location: SourceLocation, _ message: String) {
        self.location = location
        self.message = message
    }

    /// `file:line:column: message`.
    public var description: String { "\(location): \(message)" }

    /// The error as a ``KeygateError`` with `errSecParam`, the status of a bad policy file.
    public var keygateError: KeygateError { KeygateError(.param, description) }
}
