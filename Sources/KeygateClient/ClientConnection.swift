import Dispatch
import KeygateItems
import KeygatePAM
import KeygatePolicy
import KeygateProtocol
import Synchronization

/// The connection under a ``KeygateClient``: one request in flight at a time, answered in the
/// order the calls were made.
///
/// A call takes the connection's *line* before it touches the socket and gives it up when its
/// exchange has ended; only the line's holder writes a request or reads a reply, and a call
/// that finds the line taken waits in a first-in, first-out list, so the one-in-flight order
/// holds by construction. A call that finds the line free (nothing in flight or waiting) runs
/// on its own thread: it writes the request and waits for the reply there for at most
/// ``callerWaitMilliseconds`` (a cooperative thread must never block long), and a final reply
/// returns at once, with no thread hand-off. A relayed prompt, no reply within that bound, or
/// no connection yet hands the rest of the exchange to the connection's serial queue (a reply
/// may take long, and a prompt's answer may block on a terminal, so neither ties up the Swift
/// concurrency pool), and so does every call that had to wait for the line. A connection that
/// fails is dropped; the next request connects and says hello again.
final class ClientConnection: Sendable {
    /// How long a call that found the line free waits for its reply on its own thread before it
    /// hands the rest to the queue.
    static let callerWaitMilliseconds: Int32 = 2

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
        /// A call holds the line (its request is being written, waits for its reply or is
        /// answering a prompt).
        var lineTaken = false
        /// Calls waiting for the line, in the order they were made.
        var waiting: [LineWaiter] = []
    }

    /// How a call that found the line free ended on its own thread.
    private enum Start {
        /// The exchange is over (the line is given up).
        case finished(Result<Message, KeygateError>)
        /// The rest goes to the queue, still holding the line: the request when it was
        /// written (nil: not yet), and a frame already read for it.
        case handOff(Sent?, Frame?)
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

    /// How long a new connection waits for the daemon's challenge, which it sends at once.
    static let challengeSeconds = 5.0

    /// The daemon's version from the last hello.
    var daemonVersion: String { state.withLock { $0.daemonVersion } }

    /// Connects and says hello now (on the calling thread), unless already connected.
    func open() throws(KeygateError) {
        _ = try connected()
    }

    /// Sends `request` and returns the daemon's final reply to it (an `error` reply included),
    /// answering the prompts it relays on the way. A cancelled task cancels its request.
    func perform(_ request: Message, reason: String) async throws(KeygateError) -> Message {
        // The token is drawn and the line taken or queued for in one critical section: calls
        // are served in the order they got here.
        let (token, waiter) = state.withLock { state -> (UInt64, LineWaiter?) in
            defer { state.nextToken += 1 }
            guard state.lineTaken else {
                state.lineTaken = true
                return (state.nextToken, nil)
            }
            let waiter = LineWaiter()
            state.waiting.append(waiter)
            return (state.nextToken, waiter)
        }
        let result = await withTaskCancellationHandler { () async -> Result<Message, KeygateError> in
            if let waiter {
                return await withCheckedContinuation { continuation in
                    waiter.run(on: queue) {
                        let result = self.send(request, token: token).flatMap {
                            self.conclude($0.socket, requestID: $0.requestID, reason: reason)
                        }
                        self.giveUpLine()
                        continuation.resume(returning: result)
                    }
                }
            }
            switch self.start(request, token: token, reason: reason) {
            case .finished(let result):
                self.giveUpLine()
                return result
            case .handOff(let sent, let early):
                return await withCheckedContinuation { continuation in
                    queue.async {
                        let result = (sent.map { .success($0) } ?? self.send(request, token: token)).flatMap {
                            self.conclude($0.socket, requestID: $0.requestID, reason: reason, early: early)
                        }
                        self.giveUpLine()
                        continuation.resume(returning: result)
                    }
                }
            }
        } onCancel: {
            self.cancel(token: token)
        }
        // A cancel that came after the exchange ended left the token behind.
        state.withLock { _ = $0.cancelledEarly.remove(token) }
        return try result.get()
    }

    /// The line's holder writes `request` and waits for the reply for at most
    /// ``callerWaitMilliseconds``, on the calling thread.
    private func start(_ request: Message, token: UInt64, reason: String) -> Start {
        // Connecting (and its hello) may wait long: left to the queue.
        guard state.withLock({ $0.socket != nil && $0.nextID != .max }) else { return .handOff(nil, nil) }
        switch send(request, token: token) {
        case .failure(let error):
            return .finished(.failure(error))
        case .success(let sent):
            let frame: Frame?
            do throws(KeygateError) {
                frame = try sent.socket.receive(withinMilliseconds: Self.callerWaitMilliseconds)
            } catch {
                state.withLock { $0.inFlight = nil }
                dropCurrent()
                return .finished(.failure(error))
            }
            guard let frame, frame.type != .prompt else { return .handOff(sent, frame) }
            // A final reply (or an error frame): concluded here, with no wait.
            return .finished(conclude(sent.socket, requestID: sent.requestID, reason: reason, early: frame))
        }
    }

    /// The line's holder is done: the line goes to the first waiting call (on the queue), or
    /// is free.
    private func giveUpLine() {
        let next = state.withLock { state -> LineWaiter? in
            guard !state.waiting.isEmpty else {
                state.lineTaken = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.hand(on: queue)
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
        let version = try socket.greet(
            requestID: id, accessGroups: accessGroups, clientName: clientName,
            answersPrompts: passphraseSource != nil, wait: min(replyTimeout, Self.challengeSeconds),
            replyTimeout: replyTimeout)
        state.withLock {
            $0.socket = socket
            $0.daemonVersion = version
        }
        return socket
    }

    /// Connects when needed, records `request` as the one in flight and writes it; by the
    /// line's holder.
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
    /// way; on the queue (or on the caller's thread when `early` is that reply).
    private func conclude(
        _ socket: ClientSocket, requestID: UInt32, reason: String, early first: Frame? = nil
    ) -> Result<Message, KeygateError> {
        defer { state.withLock { $0.inFlight = nil } }
        do throws(KeygateError) {
            // A frame already read (on the caller's thread, or while a prompt was being
            // answered) is handled first.
            var early = first
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
                    let reply = try ClientSocket.decode(frame, path: path)
                    drop(socket)
                    return .failure(
                        reply.keygateError
                            ?? KeygateError(.notAvailable, "keygated at \(path) closed the connection"))
                }
                guard frame.requestID == requestID else {
                    throw KeygateError(
                        .notAvailable, "keygated at \(path) answered request \(frame.requestID), not \(requestID)")
                }
                let reply = try ClientSocket.decode(frame, path: path)
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
            // A message expects nothing back (the daemon would take a frame now as the answer
            // to its next prompt, or as out of order): it is shown, and the wait goes on.
            let kind: PAMMessage.Kind = style == .errorMessage ? .error : .info
            passphraseSource?.show(PAMMessage(kind: kind, text: text, service: "keygated"))
            return nil
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

/// A call waiting for its connection's line. Its work is set once the call awaits, and runs
/// on the connection's queue when the line is handed to it (at once, if that came first).
private final class LineWaiter: Sendable {
    private let state = Mutex<(work: (@Sendable () -> Void)?, handed: Bool)>((nil, false))

    /// Sets the call's work; runs it on `queue` now when the line was already handed over.
    func run(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.handed { return true }
            state.work = work
            return false
        }
        if now { queue.async(execute: work) }
    }

    /// The line is this call's: its work runs on `queue` (once it is set).
    func hand(on queue: DispatchQueue) {
        let work = state.withLock { state -> (@Sendable () -> Void)? in
            defer { state.work = nil }
            state.handed = true
            return state.work
        }
        if let work { queue.async(execute: work) }
    }
}
