public import KeygateItems
public import KeygatePolicy
public import KeygateProtocol

/// An authentication agent's connection to `keygated`: once made, the daemon asks it the PAM
/// questions of the requests of its login session whose requesters cannot be asked themselves
/// (a job without a terminal; the SSH agent and Secret Service frontends), each with what the
/// daemon knows of the request: the operation and item, the requesting program and pid.
///
/// One agent per session: a second is refused (`errSecDuplicateItem`) while the first is
/// connected. The agent runs as the user, as polkit's agents do: it is shown only requests of
/// its own uid and session, chosen by the daemon from the kernel's view of each requester.
public final class AgentConnection {
    /// The daemon's socket.
    public let socketPath: String
    private let socket: ClientSocket

    /// One question or message from the daemon, under its prompt id.
    public struct Prompt: Sendable {
        /// The id an answer goes back under.
        public let id: UInt32
        /// What to show.
        public let prompt: AgentPrompt
    }

    /// Connects to `keygated` at `socketPath` and registers as the caller's session's agent.
    /// - Throws: `errSecNotAvailable` naming the socket when no daemon answers there;
    ///   `errSecDuplicateItem` when the session has an agent already.
    public init(socketPath: String = KeygateClient.defaultSocketPath, clientName: String = "keygate agent")
        throws(KeygateError)
    {
        self.socketPath = socketPath
        socket = try ClientSocket(path: socketPath, timeout: 30)
        _ = try socket.greet(
            requestID: 1, accessGroups: ["keygate.agent"], clientName: clientName, answersPrompts: true,
            wait: ClientConnection.challengeSeconds, replyTimeout: 30)
        try socket.send(.registerAgent, requestID: 2)
        switch try ClientSocket.decode(try socket.receive(timeout: 30), path: socketPath) {
        case .done: break
        case let other: throw ClientSocket.unexpected(other, path: socketPath, for: "answered registerAgent with")
        }
    }

    /// The next prompt, waiting as long as it takes; nil when the daemon closed the connection.
    /// - Throws: `errSecNotAvailable` when the daemon sends something that is not a prompt.
    public func next() throws(KeygateError) -> Prompt? {
        // An agent waits for prompts as long as there are none; a frame, once it starts, comes
        // whole within the usual reply timeout.
        while !socket.hasInput(withinMilliseconds: 60_000) {}
        let frame: Frame
        do {
            frame = try socket.receive(timeout: 30)
        } catch {
            return nil
        }
        switch try ClientSocket.decode(frame, path: socketPath) {
        case .agentPrompt(let prompt): return Prompt(id: frame.requestID, prompt: prompt)
        case let other: throw ClientSocket.unexpected(other, path: socketPath, for: "sent an agent")
        }
    }

    /// Answers the question `id` with `answer`; nil cancels the request it belongs to.
    public func answer(_ id: UInt32, with answer: SecretData?) throws(KeygateError) {
        try socket.send(answer.map { .promptAnswer($0) } ?? .cancel, requestID: id)
    }
}
