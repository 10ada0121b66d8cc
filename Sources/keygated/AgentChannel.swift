import Dispatch
import KeygateItems
import KeygatePAM
import KeygateProtocol
import KeygateServing
import Synchronization

/// One registered authentication agent: its connection, over which the daemon sends
/// `agentPrompt` frames for its session's requests and reads the answers.
///
/// The agent's own connection thread reads its socket (``serve(_:)``) and hands each answer to
/// the request waiting for it; a request asks from its PAM thread (``ask(_:timeoutSeconds:)``)
/// and waits at most the prompt timeout. An answer under an id no prompt waits for (a late one,
/// after its timeout) is dropped; any frame but an answer or a cancel ends the agent's
/// connection, and with it every prompt it was asked (each then ends as cancelled).
final class AgentChannel: Sendable {
    /// Who the agent is, from the kernel.
    let identity: PeerIdentity
    private let wire: Wire

    /// How a prompt the agent was asked ended.
    enum Reply: Sendable {
        /// The agent's answer (copied into a wiped-on-release passphrase).
        case answered(Passphrase)
        /// The agent said no (a cancel, or an answer with nothing in it).
        case cancelled
        /// The agent's connection ended first.
        case gone
    }

    private final class Waiter: Sendable {
        let signal = DispatchSemaphore(value: 0)
        let reply = Mutex<Reply?>(nil)
    }

    private struct State {
        var nextID: UInt32 = 1
        var waiting: [UInt32: Waiter] = [:]
        var connected = true
    }

    private let state = Mutex(State())

    /// The agent on the connection written through `wire`, run by `identity`.
    init(identity: PeerIdentity, wire: Wire) {
        self.identity = identity
        self.wire = wire
    }

    /// Whether the agent's connection is still there.
    var isConnected: Bool { state.withLock { $0.connected } }

    /// Shows `prompt` (a question) and waits at most `timeoutSeconds` for the answer.
    /// - Returns: the reply; nil when none came in time.
    func ask(_ prompt: AgentPrompt, timeoutSeconds: Int) -> Reply? {
        let waiter = Waiter()
        let id: UInt32? = state.withLock { state in
            guard state.connected else { return nil }
            let id = state.nextID
            state.nextID &+= 1
            state.waiting[id] = waiter
            return id
        }
        guard let id else { return .gone }
        guard wire.toAgent(.agentPrompt(prompt), id: id) else {
            _ = state.withLock { $0.waiting.removeValue(forKey: id) }
            return .gone
        }
        let answered = waiter.signal.wait(timeout: .now() + .seconds(timeoutSeconds)) == .success
        _ = state.withLock { $0.waiting.removeValue(forKey: id) }
        guard answered else { return nil }
        return waiter.reply.withLock { $0 } ?? .gone
    }

    /// Shows `prompt` (a message: an error or information), waiting for nothing.
    func show(_ prompt: AgentPrompt) {
        let id: UInt32? = state.withLock { state in
            guard state.connected else { return nil }
            defer { state.nextID &+= 1 }
            return state.nextID
        }
        if let id { _ = wire.toAgent(.agentPrompt(prompt), id: id) }
    }

    /// Reads the agent's connection until it ends, handing each answer to the prompt waiting
    /// for it; then every prompt still waiting ends as ``Reply/gone``.
    func serve(_ reader: FrameReader) {
        defer { close() }
        while true {
            switch reader.next() {
            case .frame(var frame):
                defer { frame.wipe() }
                guard let message = wire.decode(frame) else { return }
                switch message {
                case .promptAnswer(let answer?):
                    deliver(.answered(answer.withUnsafeBytes { Passphrase(bytes: $0) }), to: frame.requestID)
                case .promptAnswer(nil), .cancel:
                    deliver(.cancelled, to: frame.requestID)
                default:
                    wire.refuse(.outOfOrder("an authentication agent may only answer prompts, not send \(frame.type)"))
                    return
                }
            case .timedOut:
                continue  // an agent waits for prompts as long as it likes
            case .closed:
                return
            case .broken(let error):
                wire.refuse(error)
                return
            }
        }
    }

    /// Gives `reply` to the prompt `id` waits on, if one does.
    private func deliver(_ reply: Reply, to id: UInt32) {
        guard let waiter = state.withLock({ $0.waiting[id] }) else { return }
        waiter.reply.withLock { $0 = reply }
        waiter.signal.signal()
    }

    /// The agent's connection ended: no more prompts, and those waiting end as gone.
    private func close() {
        let waiting = state.withLock { state in
            state.connected = false
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for waiter in waiting {
            waiter.reply.withLock { $0 = .gone }
            waiter.signal.signal()
        }
    }
}
