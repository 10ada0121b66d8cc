import KeygatePAM
import KeygateProtocol
import Synchronization

/// The PAM conversation of one request whose requester cannot be asked itself, held with its
/// session's authentication agent (``AgentChannel``): each prompt goes to the agent with what
/// the daemon knows of the request (the operation and item, the requester's program and pid,
/// from the kernel), and waits at most `prompt-timeout` for the answer. A cancel, an agent gone,
/// or no answer in time answers nil (the module aborts; the request ends cancelled, or not
/// allowed when no answer came in time: ``promptTimedOut``); every later prompt of the request is
/// refused at once.
final class AgentPassphraseSource: PassphraseSource {
    private let agent: AgentChannel
    private let purpose: String
    private let program: String
    private let pid: Int32
    private let timeoutSeconds: Int
    private struct State {
        var ended = false
        var timedOut = false
    }
    private let state = Mutex(State())

    init(agent: AgentChannel, purpose: String, program: String, pid: Int32, timeoutSeconds: Int) {
        self.agent = agent
        self.purpose = purpose
        self.program = program
        self.pid = pid
        self.timeoutSeconds = timeoutSeconds
    }

    /// Whether a prompt went unanswered within the timeout.
    var promptTimedOut: Bool { state.withLock { $0.timedOut } }

    func passphrase(for prompt: PassphrasePrompt) -> Passphrase? {
        guard !state.withLock({ $0.ended }) else { return nil }
        let reply = agent.ask(
            self.prompt(prompt.echo ? .echoOn : .echoOff, prompt.text), timeoutSeconds: timeoutSeconds)
        switch reply {
        case .answered(let passphrase):
            return passphrase
        case .cancelled, .gone:
            state.withLock { $0.ended = true }
            return nil
        case nil:
            state.withLock { state in
                state.ended = true
                state.timedOut = true
            }
            return nil
        }
    }

    func show(_ message: PAMMessage) {
        guard !state.withLock({ $0.ended }) else { return }
        agent.show(prompt(message.kind == .info ? .textInfo : .errorMessage, message.text))
    }

    private func prompt(_ style: PromptStyle, _ text: String) -> AgentPrompt {
        AgentPrompt(style: style, text: text, purpose: purpose, program: program, pid: pid)
    }
}
