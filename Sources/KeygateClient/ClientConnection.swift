import Dispatch
import Keygate
import KeygatePAM
import KeygatePolicy
import KeygateProtocol
import KeygateStore
import Synchronization

/// The connection under a ``KeygateClient``: one request in flight at a time, run on a serial
/// queue of its own (a request waits there for the daemon, and a prompt's answer may block on a
/// terminal, so neither ties up the Swift concurrency pool). A
/// connection that fails is dropped; the next request connects and says hello again.
final class ClientConnection: Sendable {
    let path: String
    let accessGroups: [String]
    let clientName: String
    let passphraseSource: (any PassphraseSource)?
    let replyTimeout: Double
    private let queue = DispatchQueue(label: "keygate.client")

    /// A request written to the daemon, waiting for its reply.
    private typealias Sent = (socket: ClientSocket, requestID: UInt32)

    private struct InFlight {
        let token: UInt64
        let requestID: UInt32
        var cancelled = false
    }

    private struct State {
        var socket: ClientSocket?
        var daemonVersion = ""
        var nextID: UInt32 = 1
        var nextToken: UInt64 = 1
        var inFlight: InFlight?
        /// Operations cancelled before they reached the wire.
        var cancelledEarly: Set<UInt64> = []
    }

    private let state = Mutex(State())

    init(
        path: String, accessGroups: [String], clientName: String, passphraseSource: (any PassphraseSource)?,
        replyTimeout: Double
    ) {
        self.path = path
        self.accessGroups = accessGroups
        self.clientName = clientName
        self.passphraseSource = passphraseSource
        self.replyTimeout = replyTimeout
    }

    /// The daemon's version from the last hello.
    var daemonVersion: String { state.withLock { $0.daemonVersion } }

    /// Connects and says hello now (on the calling thread), unless already connected.
    func open() throws(KeygateError) {
        _ = try connected()
    }

    /// Sends `request` and returns the daemon's final reply to it (an `error` reply included),
    /// answering the prompts it relays on the way. A cancelled task cancels its request.
    func perform(_ request: Message, reason: String) async throws(KeygateError) -> Message {
        let token = state.withLock { state in
            defer { state.nextToken += 1 }
            return state.nextToken
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Message, KeygateError>, Never>) in
                // Sending and waiting both run on the serial queue, so a second request cannot be
                // written before the first one's reply has been read.
                queue.async {
                    let result = self.send(request, token: token).flatMap {
                        self.conclude($0.socket, requestID: $0.requestID, reason: reason)
                    }
                    continuation.resume(returning: result)
                }
            }
        } onCancel: {
            self.cancel(token: token)
        }
        // A cancel that came after the exchange ended left the token behind.
        state.withLock { _ = $0.cancelledEarly.remove(token) }
        return try result.get()
    }

    /// Cancels the request in flight, if any (its reply is then `errSecUserCanceled`, or its
    /// result when the daemon had already finished it).
    func cancelInFlight() { cancel(token: nil) }

    private func cancel(token: UInt64?) {
        let target: (ClientSocket, UInt32)? = state.withLock { state in
            guard let inFlight = state.inFlight, token == nil || inFlight.token == token else {
                if let token { state.cancelledEarly.insert(token) }
                return nil
            }
            state.inFlight?.cancelled = true
            return state.socket.map { ($0, inFlight.requestID) }
        }
        guard let (socket, requestID) = target else { return }
        // A failure to send shows up in the waiting request's read.
        try? socket.send(.cancel, requestID: requestID)
    }

    /// The socket, connecting and saying hello first when there is none.
    private func connected() throws(KeygateError) -> ClientSocket {
        if let socket = state.withLock({ $0.socket }) { return socket }
        let socket = try ClientSocket(path: path, timeout: replyTimeout)
        // A new connection starts a new sequence of request ids.
        let id: UInt32 = 1
        state.withLock { $0.nextID = 2 }
        try socket.send(
            .hello(
                minimumVersion: FrameLimits.version, maximumVersion: FrameLimits.version, accessGroups: accessGroups,
                client: clientName), requestID: id)
        let reply = try Self.decode(try socket.receive(timeout: replyTimeout), path: path)
        switch reply {
        case .helloReply(_, let version):
            state.withLock {
                $0.socket = socket
                $0.daemonVersion = version
            }
            return socket
        case .error(let status, let message):
            throw KeygateError(KeygateStatus(rawValue: status), message)
        default:
            throw KeygateError(.notAvailable, "keygated at \(path) answered hello with \(reply.type)")
        }
    }

    /// Connects when needed, records `request` as the one in flight and writes it; on the queue.
    private func send(_ request: Message, token: UInt64) -> Result<Sent, KeygateError> {
        let early = state.withLock { $0.cancelledEarly.remove(token) != nil }
        if early { return .failure(KeygateError(.userCanceled, "the operation was cancelled before it was sent")) }
        var requestID: UInt32?
        do throws(KeygateError) {
            // Request ids only grow on a connection: before they run out, start a new one.
            if state.withLock({ $0.nextID == .max }) { dropCurrent() }
            let socket = try connected()
            requestID = state.withLock { state in
                defer { state.nextID += 1 }
                state.inFlight = InFlight(token: token, requestID: state.nextID)
                return state.nextID
            }
            try socket.send(request, requestID: requestID!)
            return .success((socket, requestID!))
        } catch {
            if requestID != nil { state.withLock { $0.inFlight = nil } }
            if error.status == .notAvailable { dropCurrent() }
            return .failure(error)
        }
    }

    /// Waits for the final reply to the request in flight, answering the prompts relayed on the
    /// way; on the queue.
    private func conclude(_ socket: ClientSocket, requestID: UInt32, reason: String) -> Result<Message, KeygateError> {
        defer { state.withLock { $0.inFlight = nil } }
        do throws(KeygateError) {
            // A frame that came while a prompt was being answered is handled first.
            var early: Frame?
            while true {
                let frame: Frame
                if let waiting = early {
                    frame = waiting
                    early = nil
                } else {
                    frame = try socket.receive(timeout: replyTimeout)
                }
                if frame.requestID == 0 {
                    // The daemon ended the connection (idle timeout, a limit, a refused frame).
                    let reply = try Self.decode(frame, path: path)
                    drop(socket)
                    return .failure(
                        reply.keygateError
                            ?? KeygateError(.notAvailable, "keygated at \(path) closed the connection"))
                }
                guard frame.requestID == requestID else {
                    throw KeygateError(
                        .notAvailable, "keygated at \(path) answered request \(frame.requestID), not \(requestID)")
                }
                let reply = try Self.decode(frame, path: path)
                guard case .prompt(let style, let text) = reply else { return .success(reply) }
                early = try answer(style: style, text: text, reason: reason, requestID: requestID, on: socket)
            }
        } catch {
            if error.status == .notAvailable { dropCurrent() }
            return .failure(error)
        }
    }

    /// Answers one relayed prompt: an answer from the passphrase source, `cancel` when it has
    /// none (or there is no source), an acknowledgement for a message; nothing when the request
    /// was cancelled meanwhile (the daemon is ending it).
    ///
    /// The source is asked on a thread of its own while this one keeps watching the socket: a
    /// frame that comes meanwhile (the daemon gave up waiting, `prompt-timeout`, or closed) is
    /// returned unanswered for the caller to handle, and the source's answer, when it comes, is
    /// dropped (a source blocked on a descriptor nobody writes to never holds the call up).
    private func answer(
        style: PromptStyle, text: String, reason: String, requestID: UInt32, on socket: ClientSocket
    ) throws(KeygateError) -> Frame? {
        let reply: Message
        if style.expectsAnswer {
            let prompt = PassphrasePrompt(
                text: text, echo: style == .echoOn, service: "keygated", factor: .passcode, reason: reason)
            let asked = PromptAnswer()
            let source = passphraseSource
            DispatchQueue.global().async { asked.finish(source?.passphrase(for: prompt)) }
            while !asked.isFinished {
                if socket.hasInput(withinMilliseconds: 50) { return try socket.receive(timeout: replyTimeout) }
            }
            reply = asked.take().map { p in .promptAnswer(p.withUnsafeBytes { SecretData(bytes: $0) }) } ?? .cancel
        } else {
            let kind: PAMMessage.Kind = style == .errorMessage ? .error : .info
            passphraseSource?.show(PAMMessage(kind: kind, text: text, service: "keygated"))
            reply = .promptAnswer(nil)
        }
        let cancelled = state.withLock { state -> Bool in
            let cancelled = state.inFlight?.cancelled ?? false
            if case .cancel = reply { state.inFlight?.cancelled = true }
            return cancelled
        }
        if cancelled { return nil }
        try socket.send(reply, requestID: requestID)
        return nil
    }

    private static func decode(_ frame: Frame, path: String) throws(KeygateError) -> Message {
        var frame = frame
        defer { frame.wipe() }
        do throws(ProtocolError) {
            return try Message(frame)
        } catch {
            throw KeygateError(.notAvailable, "keygated at \(path) broke the protocol: \(error)")
        }
    }

    private func drop(_ socket: ClientSocket) {
        socket.shutDown()
        state.withLock { state in
            if state.socket === socket { state.socket = nil }
        }
    }

    private func dropCurrent() {
        let socket = state.withLock { state -> ClientSocket? in
            defer { state.socket = nil }
            return state.socket
        }
        socket?.shutDown()
    }

    /// Closes the connection; the next request opens a new one.
    func close() { dropCurrent() }
}

/// The answer a passphrase source gave on its own thread, handed to the thread that waits.
private final class PromptAnswer: Sendable {
    private let state = Mutex<(finished: Bool, passphrase: Passphrase?)>((false, nil))

    /// Whether the source has answered (or cancelled).
    var isFinished: Bool { state.withLock { $0.finished } }

    /// Records the source's answer (nil: cancelled).
    func finish(_ passphrase: Passphrase?) {
        state.withLock { $0 = (true, passphrase) }
    }

    /// The answer, once; nil when the source cancelled.
    func take() -> Passphrase? {
        state.withLock { state in
            defer { state.passphrase = nil }
            return state.passphrase
        }
    }
}
