import Glibc
import KeygatePolicy
import KeygateProtocol
import KeygateStore
import Synchronization

/// The writing side of one connection and its order check, shared by the connection's
/// thread and the prompt relay (a PAM thread, which also reads while a prompt waits): every frame is
/// sent whole under one lock, and the ``ClientSequence`` is updated in the same critical
/// section as the send, so a client that answers at once never races the daemon's own
/// bookkeeping (a reply is recorded as finished before its bytes leave; a prompt as
/// outstanding before it is seen).
final class Wire: Sendable {
    let socket: Int32
    private let maximumFrameLength: Int
    /// How long one frame may take to leave, from its first byte to its last.
    private let sendMilliseconds: Int64
    private let who: String
    private let sequence = Mutex(ClientSequence())

    /// The writing side of `socket`: frames up to `maximumFrameLength` bytes, each of which must
    /// be taken whole by the client within `sendMilliseconds`.
    init(socket: Int32, maximumFrameLength: Int, sendMilliseconds: Int64, who: String) {
        self.socket = socket
        self.maximumFrameLength = maximumFrameLength
        self.sendMilliseconds = sendMilliseconds
        self.who = who
    }

    /// Checks `frame` against the order so far and records it.
    private func accept(_ frame: Frame) throws(ProtocolError) {
        try sequence.withLock { sequence throws(ProtocolError) in try sequence.accept(frame) }
    }

    /// `frame` checked against the order so far (and recorded) and decoded; nil when it breaks
    /// the protocol, which is then refused (``refuse(_:)``: the connection ends).
    func admit(_ frame: Frame) -> Message? {
        do throws(ProtocolError) {
            try accept(frame)
            return try Message(frame)
        } catch {
            refuse(error)
            return nil
        }
    }

    /// The request in flight, if any.
    var inFlight: UInt32? { sequence.withLock { $0.inFlight } }

    /// Sends the final reply of `requestID`; false when it could not be sent (the connection is
    /// then shut down, so its reader ends too).
    @discardableResult
    func reply(_ message: Message, requestID: UInt32) -> Bool {
        sequence.withLock { sequence in
            sequence.finished()
            return send(message, requestID: requestID)
        }
    }

    /// Sends a prompt (or, without `expectsAnswer`, a message) for `requestID` while it is the
    /// request in flight; false when it is not, or the frame could not be sent.
    func prompt(_ message: Message, requestID: UInt32, expectsAnswer: Bool) -> Bool {
        sequence.withLock { sequence in
            guard sequence.inFlight == requestID else { return false }
            if expectsAnswer { sequence.prompted() }
            return send(message, requestID: requestID)
        }
    }

    /// Sends `message` to an authentication agent under the agent's prompt id `id` (an agent's
    /// connection takes no requests, so no request order applies: ``AgentChannel`` keeps the
    /// agent's own); false when it could not be sent.
    func toAgent(_ message: Message, id: UInt32) -> Bool {
        sequence.withLock { _ in send(message, requestID: id) }
    }

    /// `frame` decoded, without the request order (an agent's frame: ``AgentChannel`` checks
    /// it); nil when it is malformed, which is then refused (the connection ends).
    func decode(_ frame: Frame) -> Message? {
        do throws(ProtocolError) {
            return try Message(frame)
        } catch {
            refuse(error)
            return nil
        }
    }

    /// Sends the connection's challenge (its first frame, request id 0); false when it could not
    /// be sent.
    func challenge(_ nonce: [UInt8]) -> Bool {
        sequence.withLock { _ in send(.challenge(nonce: nonce), requestID: 0) }
    }

    /// Sends a connection-level error (request id 0), best effort.
    func fail(_ message: Message) {
        sequence.withLock { _ in _ = send(message, requestID: 0) }
    }

    /// Logs `error` and sends it as the connection's error frame (the connection then ends).
    func refuse(_ error: ProtocolError) {
        Log.line("\(who): \(error); connection closed")
        fail(.error(status: error.status, message: error.description))
    }

    /// Sends one frame (the caller holds the lock).
    private func send(_ message: Message, requestID: UInt32) -> Bool {
        var frame = message.frame(requestID: requestID)
        defer { frame.wipe() }
        var bytes: [UInt8]
        do throws(ProtocolError) {
            bytes = try frame.encoded(maximumLength: maximumFrameLength)
        } catch {
            let tooLarge = KeygateError(.allocate, "the reply exceeds the frame limit; ask for fewer items")
            return send(Message(tooLarge), requestID: requestID)
        }
        defer { SecretData.wipe(&bytes) }
        // The whole frame has one deadline: a client that takes a few bytes now and then cannot
        // stretch it (a timeout per send would restart with each).
        let deadline = FrameReader.monotonicMilliseconds() + sendMilliseconds
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                Glibc.send(socket, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if written < 0 && errno == EINTR { continue }
            if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                let left = deadline - FrameReader.monotonicMilliseconds()
                if left > 0 {
                    var poller = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&poller, 1, Int32(clamping: left))
                    continue
                }
                Log.line("\(who): the client took no whole reply in \(sendMilliseconds / 1000) s; connection closed")
                shutdown(socket, Int32(SHUT_RDWR))
                return false
            }
            guard written > 0 else {
                Log.line("\(who): the client stopped reading; connection closed")
                shutdown(socket, Int32(SHUT_RDWR))
                return false
            }
            offset += written
        }
        return true
    }
}
