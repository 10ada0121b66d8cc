import Glibc
import Keygate
import KeygatePolicy
import KeygateProtocol
import KeygateStore

/// One client connection, served on its own thread: frames are read with a deadline (the
/// idle timeout), decoded and checked for order *before* anything acts on them, answered one
/// at a time, and written with a send timeout. Any protocol error, a stalled reader or writer,
/// or an idle timeout ends this connection only: an error frame (request id 0, with the
/// status) when it can still be sent, then close. Nothing a connection sends reaches the
/// facade except a fully decoded, in-order request.
final class Connection: @unchecked Sendable {
    // Owned by this connection's thread only, after start().
    private let socket: Int32
    private let identity: PeerIdentity
    private let pidfd: Int32
    private let keychains: UserKeychains
    private let configuration: Configuration
    private var decoder: FrameDecoder
    private var sequence = ClientSequence()
    private var keychain: Keychain?

    init(socket: Int32, identity: PeerIdentity, pidfd: Int32, keychains: UserKeychains, configuration: Configuration) {
        self.socket = socket
        self.identity = identity
        self.pidfd = pidfd
        self.keychains = keychains
        self.configuration = configuration
        self.decoder = FrameDecoder(maximumLength: configuration.maximumFrameLength)
    }

    /// Serves until the client leaves or breaks the protocol; closes the socket and the pidfd.
    func serve() {
        defer {
            close(pidfd)
            close(socket)
        }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        defer { SecretData.wipe(&buffer) }
        while true {
            var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(configuration.idleTimeoutSeconds * 1000))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else {
                let what = decoder.bufferedCount > 0 ? "a half-sent frame" : "no request"
                end(
                    KeygateError(
                        .interactionNotAllowed, "idle timeout: \(what) for \(configuration.idleTimeoutSeconds) s"))
                return
            }
            let count = recv(socket, &buffer, buffer.count, 0)
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            if count <= 0 {
                do throws(ProtocolError) {
                    try decoder.finish()
                } catch {
                    refuse(error)
                }
                return
            }
            let frames: [Frame]
            do throws(ProtocolError) {
                frames = try decoder.append(buffer[0..<count])
            } catch {
                refuse(error)
                return
            }
            for var frame in frames {
                defer { frame.wipe() }
                guard handle(frame) else { return }
            }
        }
    }

    /// Acts on one frame; false when the connection is to end.
    private func handle(_ frame: Frame) -> Bool {
        let message: Message
        do throws(ProtocolError) {
            try sequence.accept(frame)
            message = try Message(frame)
        } catch {
            refuse(error)
            return false
        }
        let reply: Message
        switch message {
        case .hello(let minimum, let maximum, let groups, _):
            let (answer, keychain) = RequestHandler(identity: identity, keychains: keychains)
                .hello(minimum: minimum, maximum: maximum, accessGroups: groups)
            guard let keychain else {
                send(answer, requestID: frame.requestID)
                return false
            }
            self.keychain = keychain
            reply = answer
            sequence.finished()
        case .cancel, .promptAnswer:
            // No prompt is ever outstanding in this layer; a cancel of the request in flight
            // cannot arrive while it runs (requests are answered before the next read).
            return true
        default:
            reply = RequestHandler(identity: identity, keychains: keychains).reply(to: message, keychain: keychain!)
            sequence.finished()
        }
        return send(reply, requestID: frame.requestID)
    }

    /// Sends `message`; false (and the connection ends) when it cannot be sent in time.
    @discardableResult
    private func send(_ message: Message, requestID: UInt32) -> Bool {
        var frame = message.frame(requestID: requestID)
        defer { frame.wipe() }
        var bytes: [UInt8]
        do throws(ProtocolError) {
            bytes = try frame.encoded(maximumLength: configuration.maximumFrameLength)
        } catch {
            let tooLarge = KeygateError(.allocate, "the reply exceeds the frame limit; ask for fewer items")
            return send(Message(tooLarge), requestID: requestID)
        }
        defer { SecretData.wipe(&bytes) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                Glibc.send(socket, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                Log.line("uid \(identity.uid) pid \(identity.pid): the client stopped reading; connection closed")
                return false
            }
            offset += written
        }
        return true
    }

    private func refuse(_ error: ProtocolError) {
        Log.line("uid \(identity.uid) pid \(identity.pid): \(error); connection closed")
        send(.error(status: error.status, message: error.description), requestID: 0)
    }

    private func end(_ error: KeygateError) {
        Log.line("uid \(identity.uid) pid \(identity.pid): \(error.message); connection closed")
        send(Message(error), requestID: 0)
    }
}
