import Glibc

/// logind's `LockedHint` asked on the D-Bus wire directly, without libsystemd (loading it and
/// the libraries it binds would be most of what the question costs a short-lived command): one
/// connection to a `unix:path=` bus, the EXTERNAL handshake, `Hello` and one `Properties.Get`,
/// sent together, and the answer read by a deadline. The question can go out ahead of need
/// (``ask(socketPath:session:deadline:)``) and its answer be read when the state is needed
/// (``answer()``). Everything read from the bus is bounds-checked (``DBusIncomingMessage``).
///
/// `@unchecked Sendable`: one thread at a time uses a question (a ``LogindSession/Question``
/// hands it out once, under its lock, and forgets it).
final class LogindWireQuestion: @unchecked Sendable {
    /// The connected socket, -1 once answered or forgotten.
    private var socket: Int32
    /// When the whole question must have been answered (CLOCK_MONOTONIC, µs).
    var deadline: UInt64

    private init(socket: Int32, deadline: UInt64) {
        self.socket = socket
        self.deadline = deadline
    }

    deinit { forget() }

    /// Connects to the bus socket at `socketPath` and sends the whole question for the
    /// `LockedHint` of `session` (the EXTERNAL handshake, BEGIN, Hello and the Get in one write:
    /// SASL on a bus need not be synchronous, as dbus-broker documents and dbus-daemon does; the
    /// bus answers AUTH with one line and then the calls, in order, so the question costs one
    /// round trip), without waiting for an answer.
    /// - Throws: ``DBusWireError/system(_:)`` with `ENOENT` when there is no socket; the failure
    ///   when it cannot be connected to or written by `deadline`.
    static func ask(socketPath: String, session: String, deadline: UInt64) throws(DBusWireError) -> LogindWireQuestion {
        let hello = DBusMethodCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "Hello")
        let get = DBusMethodCall(
            destination: "org.freedesktop.login1",
            path: DBusObjectPath.encode("/org/freedesktop/login1/session", session),
            interface: "org.freedesktop.DBus.Properties", member: "Get",
            arguments: ["org.freedesktop.login1.Session", "LockedHint"])
        guard let helloBytes = hello.bytes(serial: 1), let getBytes = get.bytes(serial: 2) else {
            throw .system(ENAMETOOLONG)
        }
        let fd = Glibc.socket(
            AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw .system(errno) }
        let question = LogindWireQuestion(socket: fd, deadline: deadline)
        try question.connect(to: socketPath)
        // EXTERNAL authentication as this effective uid (the bus checks it against SO_PEERCRED).
        let uid = Array(String(geteuid()).utf8)
        let hex = uid.map { String($0, radix: 16) }.joined()
        let handshake = [0] + Array("AUTH EXTERNAL \(hex)\r\nBEGIN\r\n".utf8) + helloBytes + getBytes
        try question.send(handshake)
        return question
    }

    /// Reads the answer by the deadline, then closes the socket.
    /// - Returns: the `LockedHint`.
    /// - Throws: ``DBusWireError/timedOut`` past the deadline, ``DBusWireError/refused`` when the
    ///   bus refused the handshake, ``DBusWireError/errorReply(_:)`` for an error reply,
    ///   ``DBusWireError/badMessage`` for a reply that is not a boolean in a variant, or
    ///   ``DBusWireError/system(_:)`` with `EALREADY` when it was answered or forgotten before.
    func answer() throws(DBusWireError) -> Bool {
        guard socket >= 0 else { throw .system(EALREADY) }
        defer { forget() }
        guard try line().starts(with: Array("OK ".utf8)) else { throw .refused }
        while true {
            let message = try nextMessage()
            guard message.replySerial == 2, message.type == 2 || message.type == 3 else { continue }
            if message.type == 3 { throw .errorReply(message.errorName) }
            return try message.variantBoolean()
        }
    }

    /// Drops the question: its socket is closed (the answer, if any, is not read).
    func forget() {
        if socket >= 0 { close(socket) }
        socket = -1
    }

    // MARK: - The socket

    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000 + UInt64(time.tv_nsec) / 1000
    }

    /// A Unix socket's connect does not go on in the background: `EAGAIN` is a full listen
    /// queue, tried again every millisecond until the deadline.
    private func connect(to path: String) throws(DBusWireError) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() where index < raw.count - 1 { raw[index] = byte }
        }
        while true {
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            if result == 0 || errno == EISCONN { return }
            let code = errno
            guard code == EAGAIN || code == EINTR else { throw .system(code) }
            guard Self.now() < deadline else { throw .timedOut }
            usleep(1000)
        }
    }

    /// Waits until the socket is ready for `events`.
    private func wait(_ events: Int16) throws(DBusWireError) {
        while true {
            let now = Self.now()
            guard now < deadline else { throw .timedOut }
            let left = (deadline - now + 999) / 1000
            var poller = pollfd(fd: socket, events: events, revents: 0)
            let result = poll(&poller, 1, Int32(min(left, 60_000)))
            if result > 0 { return }
            if result < 0 && errno != EINTR { throw .system(errno) }
        }
    }

    private func send(_ bytes: [UInt8]) throws(DBusWireError) {
        try transfer(bytes.count, waitingFor: Int16(POLLOUT)) { offset in
            bytes.withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
        }
    }

    /// Exactly `count` bytes (`ECONNRESET` when the bus hangs up first).
    private func receive(_ count: Int) throws(DBusWireError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        try transfer(count, waitingFor: Int16(POLLIN)) { offset in
            bytes.withUnsafeMutableBytes { recv(socket, $0.baseAddress! + offset, count - offset, Int32(MSG_DONTWAIT)) }
        }
        return bytes
    }

    /// Moves `count` bytes by `io` (a non-blocking send or receive of what is left past an
    /// offset), waiting for `events` whenever the socket is not ready, until the deadline.
    private func transfer(_ count: Int, waitingFor events: Int16, _ io: (Int) -> Int) throws(DBusWireError) {
        var offset = 0
        while offset < count {
            let moved = io(offset)
            if moved > 0 {
                offset += moved
            } else if moved < 0 && (errno == EAGAIN || errno == EINTR) {
                try wait(events)
            } else {
                throw .system(moved < 0 ? errno : ECONNRESET)
            }
        }
    }

    /// The bus's one-line answer to AUTH, without its "\r\n". BEGIN and the calls went out with
    /// AUTH, so the replies to them may follow the line in the socket: the line is found with
    /// `MSG_PEEK` and exactly its bytes are consumed, leaving the replies. Anything but one line
    /// of under 256 bytes ending in "\r\n" is ``DBusWireError/badMessage``.
    private func line() throws(DBusWireError) -> [UInt8] {
        var line: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 256)
        while true {
            let room = 255 - line.count
            guard room > 0 else { throw .badMessage }
            let peeked = chunk.withUnsafeMutableBytes {
                recv(socket, $0.baseAddress, room, Int32(MSG_DONTWAIT | MSG_PEEK))
            }
            if peeked > 0 {
                let end = chunk[0..<peeked].firstIndex(of: 10)
                let take = end.map { $0 + 1 } ?? peeked
                var got = 0
                repeat {
                    got = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, take, Int32(MSG_DONTWAIT)) }
                } while got < 0 && errno == EINTR
                guard got == take else { throw got < 0 ? .system(errno) : .badMessage }
                line += chunk[0..<take]
                guard end != nil else { continue }
                guard line.count >= 2, line[line.count - 2] == 13 else { throw .badMessage }
                return Array(line.dropLast(2))
            }
            if peeked < 0 && (errno == EAGAIN || errno == EINTR) {
                try wait(Int16(POLLIN))
            } else {
                throw .system(peeked < 0 ? errno : ECONNRESET)
            }
        }
    }

    /// The next whole message from the bus.
    private func nextMessage() throws(DBusWireError) -> DBusIncomingMessage {
        let start = try receive(16)
        guard let (total, _) = DBusIncomingMessage.extent(of: start) else { throw .badMessage }
        return try DBusIncomingMessage(start + (try receive(total - 16)))
    }
}
