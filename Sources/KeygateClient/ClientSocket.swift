internal import CPeer
import Glibc
import KeygateItems
import KeygatePolicy
import KeygateProtocol
import Synchronization

/// One connected Unix stream socket to `keygated`, read and written in whole frames with
/// deadlines. Not thread-safe by itself: only the holder of ``ClientConnection``'s line reads
/// (on the caller's thread or the connection's queue), except
/// ``send(_:requestID:)``, which takes a lock so a cancel can be written while a request waits.
final class ClientSocket: @unchecked Sendable {
    let path: String
    // Written once in init; closed once in deinit.
    private let fd: Int32
    // Used by the one exchange running at a time (the holder of ClientConnection's line).
    private var decoder = FrameDecoder(maximumLength: FrameLimits.hardMaximumLength)
    private var pending: [Frame] = []
    // The receive timeout last set on the socket (none yet: the kernel's default, forever).
    private var receiveTimeout: Double = -1
    private let sendLock = Mutex<Void>(())

    /// Connects to `path`, waiting at most `timeout` seconds for a daemon whose backlog is full;
    /// every later write waits at most as long for a daemon that stopped reading.
    /// - Throws: `errSecParam` for a path too long for a Unix socket; `errSecNotAvailable`,
    ///   naming the socket, when nothing listens there, the connection is refused or not
    ///   accepted in time.
    init(path: String, timeout: Double) throws(KeygateError) {
        self.path = path
        guard let address = UnixSocketAddress(path: path) else {
            throw KeygateError(
                .param, "socket path '\(path)' must be 1 to \(UnixSocketAddress.maximumPathLength) bytes without NUL")
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            throw KeygateError(.notAvailable, "keygated at \(path): no socket: \(Self.reason(errno))")
        }
        // Linux bounds a Unix stream connect by the send timeout too.
        let seconds = max(timeout, 0.001)
        var limit = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        guard address.connect(fd) == 0 else {
            let cause = errno
            close(fd)
            throw KeygateError(.notAvailable, "keygated at \(path) is not available: \(Self.reason(cause))")
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Whether a frame, bytes or the end of the connection can be read now or within
    /// `milliseconds` (``receive(timeout:)`` then does not wait long).
    func hasInput(withinMilliseconds milliseconds: Int32) -> Bool {
        guard pending.isEmpty else { return true }
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, milliseconds) != 0
    }

    /// Ends the connection in both directions (a waiting read returns at once).
    func shutDown() { shutdown(fd, Int32(SHUT_RDWR)) }

    /// Writes `message` as one frame; `passing`, when given, is a descriptor sent with its first
    /// byte (SCM_RIGHTS).
    /// - Throws: `errSecNotAvailable` when the daemon has gone; `errSecParam` when the frame
    ///   exceeds the protocol's hard limit.
    func send(_ message: Message, requestID: UInt32, passing descriptor: Int32? = nil) throws(KeygateError) {
        var frame = message.frame(requestID: requestID)
        defer { frame.wipe() }
        var bytes: [UInt8]
        do throws(ProtocolError) {
            bytes = try frame.encoded(maximumLength: FrameLimits.hardMaximumLength)
        } catch {
            throw KeygateError(.param, "the request is too large to send: \(error)")
        }
        defer { SecretData.wipe(&bytes) }
        let failure: Int32? = sendLock.withLock { _ -> Int32? in
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { raw in
                    if offset == 0, let descriptor {
                        return keygate_send_with_descriptor(fd, raw.baseAddress!, UInt(raw.count), descriptor)
                    }
                    return Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return errno }
                offset += written
            }
            return nil
        }
        if let failure {
            throw KeygateError(.notAvailable, "keygated at \(path) closed the connection: \(Self.reason(failure))")
        }
    }

    /// The next frame from the daemon, waiting at most `timeout` seconds for it.
    /// - Throws: `errSecNotAvailable`, naming the socket, when the daemon closes the connection,
    ///   sends bytes that are not a frame, or sends nothing in time.
    func receive(timeout: Double) throws(KeygateError) -> Frame {
        guard pending.isEmpty else { return pending.removeFirst() }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        defer { SecretData.wipe(&buffer) }
        // One blocking recv per read, bounded by the socket's receive timeout (no poll first);
        // a frame that trickles in is bounded by the deadline as a whole.
        setReceiveTimeout(timeout)
        let deadline = Self.milliseconds() + Int((min(max(timeout, 0), 1e9) * 1000).rounded(.up))
        while pending.isEmpty {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                throw KeygateError(.notAvailable, "keygated at \(path) did not answer in \(timeout) s")
            }
            try take(buffer[0..<max(count, 0)])
            if pending.isEmpty && Self.milliseconds() >= deadline {
                throw KeygateError(.notAvailable, "keygated at \(path) did not answer in \(timeout) s")
            }
        }
        return pending.removeFirst()
    }

    /// Decodes `bytes` (one `recv`'s worth; empty: the daemon closed the connection) into
    /// ``pending``.
    private func take(_ bytes: ArraySlice<UInt8>) throws(KeygateError) {
        guard !bytes.isEmpty else {
            throw KeygateError(.notAvailable, "keygated at \(path) closed the connection")
        }
        do throws(ProtocolError) {
            pending += try decoder.append(bytes)
        } catch {
            throw KeygateError(.notAvailable, "keygated at \(path) broke the protocol: \(error)")
        }
    }

    /// The next frame when one comes whole within `milliseconds`; nil when none has (the bytes
    /// of a frame that came in part stay for the next read). Never waits longer than that.
    /// - Throws: `errSecNotAvailable`, naming the socket, when the daemon closes the connection
    ///   or sends bytes that are not a frame.
    func receive(withinMilliseconds milliseconds: Int32) throws(KeygateError) -> Frame? {
        guard pending.isEmpty else { return pending.removeFirst() }
        let deadline = Self.milliseconds() + Int(milliseconds)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        defer { SecretData.wipe(&buffer) }
        while pending.isEmpty {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(clamping: max(0, deadline - Self.milliseconds())))
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 { return nil }
            let count = ready < 0 ? -1 : recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) { continue }
            try take(buffer[0..<max(count, 0)])
        }
        return pending.removeFirst()
    }

    /// Sets the socket's receive timeout to `seconds` unless it is already that.
    private func setReceiveTimeout(_ seconds: Double) {
        guard seconds != receiveTimeout else { return }
        receiveTimeout = seconds
        let bounded = min(max(seconds, 0.001), 1e9)
        var limit = timeval(
            tv_sec: Int(bounded), tv_usec: Int((bounded - bounded.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    private static func milliseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now.tv_sec * 1000 + now.tv_nsec / 1_000_000
    }

    static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }
}
