import CPeer
import Glibc
import KeygateProtocol
import KeygateStore
import Synchronization

/// The reading side of one connection: its socket's bytes decoded into frames, handed out in
/// order. One thread reads at a time: the connection's thread between requests, and, while
/// that thread runs a request, the request's prompt waiter (``PromptRelay``, on a PAM
/// thread), which reads the `promptAnswer`, `cancel` or disconnect itself. Frames decoded
/// from one read beyond the first stay queued here for whoever reads next (a request and its
/// `cancel` written together). Bytes read and frames never handed out are wiped.
final class FrameReader: Sendable {
    /// What one ``next(deadline:)`` found.
    enum Read: Sendable {
        /// The next frame, in order.
        case frame(Frame)
        /// Nothing whole came in time; `halfFrame`: part of a frame did.
        case timedOut(halfFrame: Bool)
        /// The client closed its end (or the socket failed).
        case closed
        /// Bytes that are not a frame: the connection is to end with this error.
        case broken(ProtocolError)
    }

    private struct State: Sendable {
        var decoder: FrameDecoder
        /// One read's bytes: 16 KiB, zeroed at start and wiped at the end of each connection, so
        /// kept small (a larger frame takes several reads; the bench's "Broker" rows).
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var pending: [Frame] = []
        var closed = false
        /// When the first byte of the frame now half-read came (``monotonicMilliseconds()``).
        var frameStarted: Int64?
        /// A descriptor passed with the bytes read (SCM_RIGHTS), not yet taken: closed unless
        /// the frame it came with claims it (``takePassedDescriptor()``).
        var passed: Int32?
        /// More than one descriptor came, or one came while another waited: refused.
        var passedTooMany = false
    }

    let socket: Int32
    /// The process that opened the connection (its `SO_PEERCRED` pid): bytes any other process
    /// sent end the connection (``ProtocolError/foreignSender(sender:opener:)``).
    let opener: Int32
    /// How long one frame may take from its first byte to its last when read without a deadline
    /// (the idle timeout), however its bytes trickle in.
    let frameMilliseconds: Int64
    private let state: Mutex<State>

    /// A reader of `socket`'s frames of at most `maximumFrameLength` bytes, each of which must
    /// come whole within `frameMilliseconds` of its first byte when read without a deadline.
    /// Bytes are taken only from `opener` (the socket must have `SO_PASSCRED`).
    init(socket: Int32, maximumFrameLength: Int, frameMilliseconds: Int64, opener: Int32) {
        self.socket = socket
        self.opener = opener
        self.frameMilliseconds = frameMilliseconds
        self.state = Mutex(State(decoder: FrameDecoder(maximumLength: maximumFrameLength)))
    }

    deinit {
        state.withLock { state in
            if let passed = state.passed { close(passed) }
            SecretData.wipe(&state.buffer)
            for index in state.pending.indices { state.pending[index].wipe() }
        }
    }

    /// The next frame. With no `deadline` (a ``monotonicMilliseconds()`` value), one blocking
    /// `recv` per read, bounded by the socket's receive timeout (the idle timeout), until a frame
    /// has begun: from its first byte on, the whole frame must come within `frameMilliseconds`
    /// (one byte now and then never keeps a half frame open); with a deadline, a `poll` until
    /// then before each read (a deadline already past: only what has come).
    func next(deadline: Int64? = nil) -> Read {
        state.withLock { state -> Read in
            while true {
                if !state.pending.isEmpty { return .frame(state.pending.removeFirst()) }
                if state.closed { return .closed }
                var deadline = deadline
                if deadline == nil, let started = state.frameStarted {
                    deadline = started + frameMilliseconds
                }
                if let deadline {
                    var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
                    let wait = Int32(clamping: max(0, deadline - Self.monotonicMilliseconds()))
                    let ready = poll(&poller, 1, wait)
                    if ready < 0 && errno == EINTR { continue }
                    if ready == 0 { return .timedOut(halfFrame: state.decoder.bufferedCount > 0) }
                    if ready < 0 { return .closed }
                }
                var sender: Int32 = 0
                var descriptor: Int32 = -1
                let count = keygate_recv_with_sender(
                    socket, &state.buffer, UInt(state.buffer.count), deadline == nil ? 0 : Int32(MSG_DONTWAIT), &sender,
                    &descriptor)
                if descriptor >= 0 && state.passed == nil {
                    state.passed = descriptor
                } else if descriptor != -1 {
                    if descriptor >= 0 { close(descriptor) }
                    state.passedTooMany = true
                }
                if count < 0 && errno == EINTR { continue }
                if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                    // Polled and woken for nothing: poll again, until the deadline.
                    if deadline != nil { continue }
                    return .timedOut(halfFrame: state.decoder.bufferedCount > 0)
                }
                if count <= 0 {
                    state.closed = true
                    do throws(ProtocolError) {
                        try state.decoder.finish()
                    } catch {
                        return .broken(error)
                    }
                    return .closed
                }
                if sender != opener {
                    // Handed on (a child holding the socket, a descriptor passed): not who connected.
                    state.closed = true
                    return .broken(.foreignSender(sender: sender, opener: opener))
                }
                do throws(ProtocolError) {
                    state.pending = try state.decoder.append(state.buffer[0..<Int(count)])
                } catch {
                    return .broken(error)
                }
                // Bytes left over after whole frames begin the next frame, now.
                if state.decoder.bufferedCount == 0 {
                    state.frameStarted = nil
                } else if state.frameStarted == nil || !state.pending.isEmpty {
                    state.frameStarted = Self.monotonicMilliseconds()
                }
            }
        }
    }

    /// The descriptor passed with the frame just read (SCM_RIGHTS), now the caller's to close;
    /// nil when none came, or when more than one did (all of them were closed).
    func takePassedDescriptor() -> Int32? {
        state.withLock { state in
            defer {
                state.passed = nil
                state.passedTooMany = false
            }
            guard !state.passedTooMany else {
                if let passed = state.passed { close(passed) }
                return nil
            }
            return state.passed
        }
    }

    /// Closes a descriptor passed with bytes no hand-off claimed.
    func discardPassedDescriptors() {
        state.withLock { state in
            if let passed = state.passed { close(passed) }
            state.passed = nil
            state.passedTooMany = false
        }
    }

    /// Milliseconds on the monotonic clock, for ``next(deadline:)``.
    static func monotonicMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
