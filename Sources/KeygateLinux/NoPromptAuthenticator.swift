public import KeygatePolicy

/// Stands in for PAM when nobody can be asked (no terminal, no askpass program, or the caller
/// said not to prompt): every proof is refused as unavailable, so a read that needs one fails
/// at once (`errSecInteractionNotAllowed` when the context says so) instead of hanging.
public struct NoPromptAuthenticator: Authenticator {
    /// Why nobody can be asked, shown in the refusal.
    public let reason: String

    /// An authenticator that never proves anything.
    public init(reason: String = "nobody can be asked: no terminal and no askpass program") {
        self.reason = reason
    }

    /// Always ``AuthenticationOutcome/unavailable(_:)``.
    public func authenticate(_ requirement: Requirement, prompt: String, context: AuthenticationContext) async
        -> AuthenticationOutcome
    {
        .unavailable(reason)
    }
}
