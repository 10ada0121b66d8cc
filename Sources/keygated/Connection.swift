import Glibc
import Keygate
import KeygatePolicy
import KeygateProtocol
import KeygateStore
import Synchronization

/// One client connection. Its reading thread reads frames with a deadline (the idle timeout,
/// set as the socket's receive timeout and not counted while a request is in flight: a prompt
/// may wait longer), decodes them and checks their order *before* anything acts on them. Requests run one at a time on the
/// connection's own ``RequestWorker`` thread, so the reading thread keeps serving the
/// request's `promptAnswer` and `cancel` frames and sees a disconnect at once (which ends a
/// waiting prompt, hence its PAM transaction). Frames are written whole under the ``Wire``'s
/// lock, with a send timeout.
///
/// Any protocol error, a stalled reader or writer, or an idle timeout ends this connection
/// only: an error frame (request id 0, with the status) when it can still be sent, then close
/// (after the request in flight, if any, has ended). Nothing a connection sends reaches the
/// facade except a fully decoded, in-order request.
final class Connection: Sendable {
    private let identity: PeerIdentity
    private let pidfd: Int32
    private let keychains: UserKeychains
    private let configuration: Configuration
    private let wire: Wire
    private let relay: PromptRelay
    private let worker = RequestWorker()
    /// Set by hello, on the reading thread, before any request can run.
    private let keychain = Mutex<Keychain?>(nil)

    init(socket: Int32, identity: PeerIdentity, pidfd: Int32, keychains: UserKeychains, configuration: Configuration) {
        self.identity = identity
        self.pidfd = pidfd
        self.keychains = keychains
        self.configuration = configuration
        self.wire = Wire(
            socket: socket, maximumFrameLength: configuration.maximumFrameLength,
            who: "uid \(identity.uid) pid \(identity.pid)")
        self.relay = PromptRelay(wire: wire, timeoutSeconds: configuration.promptTimeoutSeconds)
    }

    private var socket: Int32 { wire.socket }

    /// Serves until the client leaves or breaks the protocol; ends the request in flight (a
    /// waiting prompt answers as cancelled), then closes the socket and the pidfd.
    func serve() {
        defer {
            relay.disconnect()
            worker.stop()
            close(pidfd)
            close(socket)
        }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // The idle timeout bounds each read itself (one recv per frame, no poll before it).
        var idle = timeval(tv_sec: configuration.idleTimeoutSeconds, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &idle, socklen_t(MemoryLayout<timeval>.size))
        var decoder = FrameDecoder(maximumLength: configuration.maximumFrameLength)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        defer { SecretData.wipe(&buffer) }
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                // A request in flight (perhaps waiting on a prompt) is not idleness.
                if decoder.bufferedCount == 0 && wire.inFlight != nil { continue }
                let what = decoder.bufferedCount > 0 ? "a half-sent frame" : "no request"
                end(
                    KeygateError(
                        .interactionNotAllowed, "idle timeout: \(what) for \(configuration.idleTimeoutSeconds) s"))
                return
            }
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
            try wire.accept(frame)
            message = try Message(frame)
        } catch {
            refuse(error)
            return false
        }
        let handler = RequestHandler(identity: identity, keychains: keychains, relay: relay)
        switch message {
        case .hello(let minimum, let maximum, let groups, _):
            let (answer, keychain) = handler.hello(minimum: minimum, maximum: maximum, accessGroups: groups)
            guard let keychain else {
                wire.reply(answer, requestID: frame.requestID)
                return false
            }
            self.keychain.withLock { $0 = keychain }
            return wire.reply(answer, requestID: frame.requestID)
        case .cancel:
            relay.cancel()
            return true
        case .promptAnswer(let answer):
            relay.deliver(answer)
            return true
        default:
            return start(message, requestID: frame.requestID, handler: handler)
        }
    }

    /// Hands a request to the worker; its reply is sent from there.
    private func start(_ message: Message, requestID: UInt32, handler: RequestHandler) -> Bool {
        guard let keychain = keychain.withLock({ $0 }) else { return false }
        relay.begin(
            PromptRelay.Scope(
                requestID: requestID, reuseSeconds: RelayedRequest.reuseSeconds(message),
                pidfd: pidfd))
        let relay = self.relay
        let wire = self.wire
        let timeout = configuration.promptTimeoutSeconds
        let started = worker.submit {
            let reply = handler.reply(to: message, keychain: keychain)
            wire.reply(RelayedRequest.final(reply, ending: relay.finish(), timeout: timeout), requestID: requestID)
        }
        guard started else {
            _ = relay.finish()
            end(KeygateError(.allocate, "no thread for the request"))
            return false
        }
        return true
    }

    private func refuse(_ error: ProtocolError) {
        Log.line("uid \(identity.uid) pid \(identity.pid): \(error); connection closed")
        wire.fail(.error(status: error.status, message: error.description))
    }

    private func end(_ error: KeygateError) {
        Log.line("uid \(identity.uid) pid \(identity.pid): \(error.message); connection closed")
        wire.fail(Message(error))
    }
}
