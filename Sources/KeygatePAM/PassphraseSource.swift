public import KeygatePolicy

/// A prompt from a PAM module that needs an answer.
public struct PassphrasePrompt: Hashable, Sendable {
    /// The module's prompt text, such as `Password: `.
    public let text: String
    /// Whether the answer may be shown as typed (`PAM_PROMPT_ECHO_ON`).
    public let echo: Bool
    /// The PAM service asking.
    public let service: String
    /// The factor being proved.
    public let factor: Factor
    /// Why the user is asked (the operation prompt, for example "Read the payment token").
    public let reason: String

    /// A prompt.
    public init(text: String, echo: Bool, service: String, factor: Factor, reason: String) {
        self.text = text
        self.echo = echo
        self.service = service
        self.factor = factor
        self.reason = reason
    }
}

/// A message from a PAM module for the user (`PAM_TEXT_INFO` or `PAM_ERROR_MSG`).
public struct PAMMessage: Hashable, Sendable, CustomStringConvertible {
    /// Information or error.
    public enum Kind: String, Hashable, Sendable {
        /// `PAM_TEXT_INFO`, for example "Place your finger on the reader".
        case info
        /// `PAM_ERROR_MSG`, for example "The account is locked due to 3 failed logins."
        case error
    }

    /// Information or error.
    public let kind: Kind
    /// The module's text.
    public let text: String
    /// The PAM service it came from.
    public let service: String

    /// A message.
    public init(kind: Kind, text: String, service: String) {
        self.kind = kind
        self.text = text
        self.service = service
    }

    /// `text` for info, `error: text` for errors.
    public var description: String { kind == .info ? text : "error: \(text)" }
}

/// Where the answers to PAM prompts come from, and where module messages go.
///
/// Called on the PAM thread, never on the Swift concurrency pool, so an implementation may
/// block (reading a terminal). Duties: return nil when the user cancels (Ctrl-C, EOF, a
/// dismissed dialog); never log, store or echo a hidden answer; show messages at once.
public protocol PassphraseSource: Sendable {
    /// The answer to `prompt`, or nil when the user cancels.
    func passphrase(for prompt: PassphrasePrompt) -> Passphrase?
    /// Shows a module's message to the user.
    func show(_ message: PAMMessage)
}
