/// How a relayed PAM message is shown (PAM's `msg_style`).
public enum PromptStyle: UInt8, Sendable, Hashable {
    /// Ask, without echo (a password).
    case echoOff = 1
    /// Ask, with echo.
    case echoOn = 2
    /// Show an error; no answer.
    case errorMessage = 3
    /// Show information; no answer.
    case textInfo = 4

    /// True for the styles that expect an answer (``echoOff``, ``echoOn``).
    public var expectsAnswer: Bool { self == .echoOff || self == .echoOn }
}
