import Glibc
import Keygate
import KeygatePolicy
import KeygateProtocol
import KeygateServing
import KeygateStore
import Synchronization

/// One client connection, served by one thread. That thread reads frames with a deadline (the
/// idle timeout, set as the socket's receive timeout: one `recv` per read, no poll before it),
/// decodes them and checks their order *before* anything acts on them, then runs each request
/// itself and writes its reply: a plain request costs no thread hand-off in the daemon. While
/// a request runs, this thread does not read; the request's prompt waiter (``PromptRelay``,
/// on the PAM thread) reads the request's `promptAnswer`, `cancel` or the disconnect itself,
/// and first reads, without waiting, whatever came before its prompt. Frames are written whole
/// under the ``Wire``'s lock, each within the send timeout as a whole.
///
/// Any protocol error, a stalled reader or writer, or an idle timeout ends this connection
/// only: an error frame (request id 0, with the status) when it can still be sent, then close
/// (after the request in flight, if any, has ended). Time spent in a request (a prompt may wait
/// longer) is never counted as idle. A frame is written whole within the send timeout or the
/// connection ends (``Wire``). Nothing a connection sends reaches the facade except a
/// fully decoded, in-order request.
final class Connection: Sendable {
    private let identity: PeerIdentity
    private let pidfd: Int32
    private let keychains: UserKeychains
    private let configuration: Configuration
    private let reader: FrameReader
    private let wire: Wire
    private let relay: PromptRelay
    /// Set by hello, before any request can run (all on the connection's thread).
    private let keychain = Mutex<CallerKeychain?>(nil)
    /// The nonce of this connection's challenge, which its hello must echo.
    private let nonce: [UInt8]
    /// Whether the client said in its hello that it answers its requests' prompts.
    private let answersPrompts = Atomic<Bool>(true)

    /// A connection whose caller, `identity`, was read from the kernel before `nonce` was made.
    init(
        socket: Int32, identity: PeerIdentity, pidfd: Int32, nonce: [UInt8], keychains: UserKeychains,
        configuration: Configuration
    ) {
        self.identity = identity
        self.nonce = nonce
        self.pidfd = pidfd
        self.keychains = keychains
        self.configuration = configuration
        // The idle timeout bounds a half-sent frame as a whole, from its first byte.
        self.reader = FrameReader(
            socket: socket, maximumFrameLength: configuration.maximumFrameLength,
            frameMilliseconds: Int64(configuration.idleTimeoutSeconds) * 1000, opener: identity.pid)
        self.wire = Wire(
            socket: socket, maximumFrameLength: configuration.maximumFrameLength,
            sendMilliseconds: Int64(configuration.sendTimeoutSeconds) * 1000,
            who: "uid \(identity.uid) pid \(identity.pid)")
        self.relay = PromptRelay(wire: wire, reader: reader, timeoutSeconds: configuration.promptTimeoutSeconds)
    }

    private var socket: Int32 { wire.socket }

    /// Serves until the client leaves or breaks the protocol, then closes the socket and the
    /// pidfd (a request in flight has ended by then: it runs on this thread).
    func serve() {
        defer {
            close(pidfd)
            close(socket)
        }
        // The idle timeout bounds each read while no frame has begun (one recv, no poll before
        // it); once one has, the reader bounds the whole frame by it (``FrameReader/next(deadline:)``).
        var idle = timeval(tv_sec: configuration.idleTimeoutSeconds, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &idle, socklen_t(MemoryLayout<timeval>.size))
        // The daemon speaks first, now that it knows who the caller is: only a hello written after
        // this can echo the nonce (bytes queued before, by whatever the process ran then, cannot).
        guard wire.challenge(nonce) else { return }
        while true {
            switch reader.next() {
            case .frame(var frame):
                defer { frame.wipe() }
                guard handle(frame) else { return }
            case .timedOut(let halfFrame):
                let what = halfFrame ? "a half-sent frame" : "no request"
                end(
                    KeygateError(
                        .interactionNotAllowed, "idle timeout: \(what) for \(configuration.idleTimeoutSeconds) s"))
                return
            case .closed:
                return
            case .broken(let error):
                wire.refuse(error)
                return
            }
        }
    }

    /// Acts on one frame; false when the connection is to end.
    private func handle(_ frame: Frame) -> Bool {
        // The answer to a prompt that timed out, sent as the reply crossed it: dropped.
        if relay.isLateAnswer(frame) { return true }
        guard let message = wire.admit(frame) else { return false }
        let handler = RequestHandler(identity: identity, keychains: keychains, relay: relay)
        switch message {
        case .hello(let minimum, let maximum, let groups, _, let challenge, let answers):
            guard ChallengeNonce.matches(challenge, nonce) else {
                wire.refuse(.challengeMismatch)
                return false
            }
            // What the grants are decided on is the program the caller runs now, the one read
            // before the challenge: a caller that exec'd since is not that program any more.
            guard identity.stillRuns(pidfd: pidfd) else {
                wire.refuse(.programChanged)
                return false
            }
            let (answer, keychain) = handler.hello(minimum: minimum, maximum: maximum, accessGroups: groups)
            guard let keychain else {
                wire.reply(answer, requestID: frame.requestID)
                return false
            }
            self.keychain.withLock { $0 = keychain }
            answersPrompts.store(answers, ordering: .relaxed)
            return wire.reply(answer, requestID: frame.requestID)
        case .cancel, .promptAnswer:
            // Between requests only a cancel that crossed its request's reply passes the order
            // check (a prompt is answered while its request runs): it changes nothing.
            return true
        case .registerAgent:
            serveAsAgent(requestID: frame.requestID)
            return false
        case .sshAgentConnection(let groups, let reuseSeconds):
            return takeOver(groups: groups, reuseSeconds: reuseSeconds, requestID: frame.requestID)
        default:
            reader.discardPassedDescriptors()
            return run(message, requestID: frame.requestID, handler: handler)
        }
    }

    /// Runs a request on this thread and sends its reply; false when the connection is to end
    /// (the client left or broke the protocol while the request read the socket).
    private func run(_ message: Message, requestID: UInt32, handler: RequestHandler) -> Bool {
        guard let keychain = keychain.withLock({ $0 }) else { return false }
        let request: DaemonRequest
        do throws(KeygateError) {
            // The sequence check lets only requests reach here; anything else is a daemon bug.
            guard
                let made = try DaemonRequest(
                    message, caller: caller(), frontend: .keygateSocket,
                    answersPrompts: answersPrompts.load(ordering: .relaxed))
            else {
                return wire.reply(Message(KeygateError(.badReq, "not a request")), requestID: requestID)
            }
            request = made
        } catch {
            return wire.reply(Message(error), requestID: requestID)
        }
        relay.begin(PromptRelay.Scope(requestID: requestID, request: request))
        // One view of the device for the whole request: the reuse check and the gate agree.
        keychain.device.begin()
        let reply = handler.reply(to: request, keychain: keychain)
        relay.finish()
        let loss = relay.loss
        // After a refused frame the error frame was the connection's last word.
        if loss == .refused { return false }
        return wire.reply(reply, requestID: requestID) && loss == nil
    }

    /// Hands the SSH agent connection passed with the frame to ``DaemonSSHAgent``; `done`, or the
    /// refusal (the descriptor is closed either way when not taken).
    private func takeOver(groups: [String], reuseSeconds: UInt32, requestID: UInt32) -> Bool {
        guard keychain.withLock({ $0 }) != nil else { return false }
        guard let passed = reader.takePassedDescriptor() else {
            return wire.reply(
                Message(KeygateError(.param, "sshAgentConnection needs exactly one socket passed with it")),
                requestID: requestID)
        }
        guard groups.count <= 64, groups.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 256 }) else {
            close(passed)
            return wire.reply(
                Message(KeygateError(.param, "access groups must be 1 to 256 bytes, at most 64 of them")),
                requestID: requestID)
        }
        do throws(KeygateError) {
            try DaemonSSHAgent(keychains: keychains, configuration: configuration).takeOver(
                passed, from: identity, accessGroups: groups, reuseSeconds: reuseSeconds)
            return wire.reply(.done, requestID: requestID)
        } catch {
            Log.line("uid \(identity.uid) pid \(identity.pid): SSH agent connection refused: \(error.message)")
            return wire.reply(Message(error), requestID: requestID)
        }
    }

    /// The caller of one request: this connection's peer, with its terminal still to be read.
    private func caller() -> DaemonCaller { DaemonCaller(identity: identity, pidfd: pidfd) }

    /// Makes this connection the authentication agent of its caller's session and serves it
    /// until it ends (``AgentChannel/serve(_:)``); a second agent for a session that has one is
    /// refused (`errSecDuplicateItem`) and the connection ends.
    private func serveAsAgent(requestID: UInt32) {
        let agent = AgentChannel(identity: identity, wire: wire)
        guard keychains.agents.register(agent) else {
            Log.line(
                "uid \(identity.uid) pid \(identity.pid): an authentication agent is already registered for its session"
            )
            wire.reply(
                Message(
                    KeygateError(.duplicateItem, "an authentication agent is already registered for this session")),
                requestID: requestID)
            return
        }
        defer { keychains.agents.unregister(agent) }
        Log.line(
            "uid \(identity.uid) pid \(identity.pid): authentication agent registered for "
                + (identity.session.map { "session \($0)" } ?? "requests outside any session"))
        guard wire.reply(.done, requestID: requestID) else { return }
        agent.serve(reader)
        Log.line("uid \(identity.uid) pid \(identity.pid): authentication agent gone")
    }

    private func end(_ error: KeygateError) {
        Log.line("uid \(identity.uid) pid \(identity.pid): \(error.message); connection closed")
        wire.fail(Message(error))
    }
}
