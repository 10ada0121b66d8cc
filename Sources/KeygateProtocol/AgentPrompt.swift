/// What the daemon shows an authentication agent (``Message/agentPrompt(_:)``): one PAM message
/// of a request the agent's session made, with what the daemon itself knows of that request,
/// from the kernel and the store, never from what the requester said.
public struct AgentPrompt: Equatable, Sendable {
    /// How to show ``text``: a question (answer with `promptAnswer` under the frame's id) or a
    /// message (no answer).
    public var style: PromptStyle
    /// PAM's text.
    public var text: String
    /// What is asked about: the operation and item, as the daemon describes them
    /// ("Read mail/me in group …").
    public var purpose: String
    /// The requesting program's executable, as the kernel reports it.
    public var program: String
    /// The requesting process.
    public var pid: Int32

    /// A prompt.
    public init(style: PromptStyle, text: String, purpose: String, program: String, pid: Int32) {
        (self.style, self.text, self.purpose, self.program, self.pid) = (style, text, purpose, program, pid)
    }
}
