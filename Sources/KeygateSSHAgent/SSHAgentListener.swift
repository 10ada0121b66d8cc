import Glibc
public import KeygatePolicy
import KeygateProtocol
public import KeygateServing
import Synchronization

/// The agent's Unix socket: made at a path only this user can reach (mode 0600, appearing only
/// once it listens), each connection served on a thread of its own, its caller named by the
/// kernel (peer credentials and a pidfd, ``KeygateServing/PeerIdentity``).
public final class SSHAgentListener: Sendable {
    /// The socket's path.
    public let path: String
    private let descriptor: Int32
    private let connections = Mutex(0)

    /// The most connections served at once; more are closed at once.
    public static let maximumConnections = 64

    /// Binds and listens at `path`. Something there that is not a socket is refused, never
    /// replaced; so is a socket another agent answers on; a stale socket is replaced.
    /// - Throws: `errSecParam` naming the path (too long, not a socket, in use), `errSecIO`
    ///   when the socket cannot be made.
    public init(path: String) throws(KeygateError) {
        self.path = path
        let temporary = path + ".\(getpid()).new"
        guard let address = UnixSocketAddress(path: path), let staging = UnixSocketAddress(path: temporary) else {
            throw KeygateError(
                .param, "\(path): socket path too long (at most \(UnixSocketAddress.maximumPathLength - 20) bytes)")
        }
        var existing = stat()
        if lstat(path, &existing) == 0 {
            guard existing.st_mode & S_IFMT == S_IFSOCK else {
                throw KeygateError(.param, "\(path) exists and is not a socket; it was not replaced")
            }
            let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            defer { close(probe) }
            guard address.connect(probe) != 0 else {
                throw KeygateError(.param, "\(path): another agent is listening on it")
            }
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Self.failure("socket()", errno) }
        unlink(temporary)
        let mask = umask(0o177)
        let bound = staging.bind(fd)
        let bindError = errno
        umask(mask)
        guard bound == 0 else {
            close(fd)
            throw Self.failure("bind(\(temporary))", bindError)
        }
        // Set before anyone connects, so the kernel names the writer of every chunk, the first
        // request included (``SSHAgentConnection/serve(_:identity:pidfd:backend:log:)``).
        guard SenderCheckedRead.passCredentials(fd), chmod(temporary, 0o600) == 0, listen(fd, 64) == 0,
            rename(temporary, path) == 0
        else {
            let code = errno
            unlink(temporary)
            close(fd)
            throw Self.failure("listening on \(path)", code)
        }
        descriptor = fd
    }

    private static func failure(_ what: String, _ code: Int32) -> KeygateError {
        KeygateError(.io, "\(what) failed: \(String(cString: strerror(code)))", cause: .errno(code))
    }

    /// Accepts on a thread of its own until the process ends, serving each connection whose
    /// caller `admits` on a thread of its own with a session over `backend`; refusals and
    /// failures go to `log`.
    public func start(
        backend: any SSHAgentBackend, admits: @escaping @Sendable (PeerIdentity) -> Bool,
        log: @escaping @Sendable (String) -> Void
    ) throws(KeygateError) {
        try start(log: log) { client, accepted in
            defer { close(client) }
            let identity: PeerIdentity
            let pidfd: Int32
            do throws(PeerIdentityError) {
                (identity, pidfd) = try PeerIdentity.establish(socket: client, acceptedTicks: accepted)
            } catch {
                log("a connection was refused: \(error)")
                return
            }
            defer { close(pidfd) }
            guard admits(identity) else {
                log("a connection of uid \(identity.uid) (\(identity.executable), pid \(identity.pid)) was refused")
                return
            }
            SSHAgentConnection.serve(client, identity: identity, pidfd: pidfd, backend: backend, log: log)
        }
    }

    /// Accepts on a thread of its own until the process ends, handing each connection (its
    /// descriptor, then the ``KeygateServing/PeerIdentity/acceptedNow()`` of its accept) to
    /// `handle` on a thread of its own; `handle` owns the descriptor and closes it.
    public func start(
        log: @escaping @Sendable (String) -> Void, handle: @escaping @Sendable (Int32, UInt64) -> Void
    ) throws(KeygateError) {
        guard
            Threads.detach({ [self] in
                while true {
                    let client = PeerIdentity.accept(descriptor)
                    if client < 0 {
                        if errno == EMFILE || errno == ENFILE { usleep(100_000) }
                        continue
                    }
                    let accepted = PeerIdentity.acceptedNow()
                    let admitted = connections.withLock { count in
                        guard count < Self.maximumConnections else { return false }
                        count += 1
                        return true
                    }
                    guard admitted else {
                        log("more than \(Self.maximumConnections) connections at once: one was closed")
                        close(client)
                        continue
                    }
                    let started = Threads.detach { [self] in
                        handle(client, accepted)
                        connections.withLock { $0 -= 1 }
                    }
                    if !started {
                        close(client)
                        connections.withLock { $0 -= 1 }
                    }
                }
            })
        else { throw KeygateError(.allocate, "no thread could be made to accept connections") }
    }

    /// Removes the socket (the agent is stopping).
    public func remove() { unlink(path) }
}

/// One agent connection served to its end: frames read and answered in order by an
/// ``SSHAgentSession``, on the calling thread.
public enum SSHAgentConnection {
    /// Serves `client`, whose caller is `identity` (pinned by `pidfd`), until it closes, breaks
    /// the protocol, its process runs another program, or bytes come that another process wrote
    /// (the descriptor handed on: the kernel names each chunk's writer); closes neither descriptor.
    public static func serve(
        _ client: Int32, identity: PeerIdentity, pidfd: Int32, backend: any SSHAgentBackend,
        log: @escaping @Sendable (String) -> Void
    ) {
        guard SenderCheckedRead.passCredentials(client) else {
            log("SO_PASSCRED cannot be set on the connection of pid \(identity.pid) (errno \(errno)): it was closed")
            return
        }
        var session = SSHAgentSession(
            peer: SSHAgentPeer(
                uid: identity.uid, pid: identity.pid, executable: identity.executable, program: identity.program),
            backend: backend, log: log)
        while let payload = readFrame(client, from: identity.pid, log: log) {
            guard identity.stillRuns(pidfd: pidfd) else {
                log("pid \(identity.pid) no longer runs \(identity.executable): its connection was closed")
                return
            }
            let current = session
            let (reply, next) = Blocking.run { () async -> ([UInt8]?, SSHAgentSession) in
                var session = current
                do throws(KeygateError) {
                    return (try await session.reply(to: payload), session)
                } catch {
                    log("a malformed request from \(identity.executable) (pid \(identity.pid)): \(error.message)")
                    return (nil, session)
                }
            }
            session = next
            guard let reply, write(client, SSHAgentReply.frame(reply)) else { return }
        }
    }

    /// One frame's payload written by `writer`, or nil at the end of the stream, after a read
    /// error, for bytes another process wrote, or for a frame that is empty or longer than
    /// ``SSHAgentRequest/maximumLength`` (the connection is then closed, as OpenSSH's agent does).
    private static func readFrame(_ fd: Int32, from writer: Int32, log: @Sendable (String) -> Void) -> [UInt8]? {
        guard let header = readExactly(fd, 4, from: writer, log: log) else { return nil }
        let length = header.reduce(0) { $0 << 8 | Int($1) }
        guard length > 0, length <= SSHAgentRequest.maximumLength else {
            log("a frame of \(length) bytes (at most \(SSHAgentRequest.maximumLength)): the connection was closed")
            return nil
        }
        return readExactly(fd, length, from: writer, log: log)
    }

    private static func readExactly(_ fd: Int32, _ count: Int, from writer: Int32, log: @Sendable (String) -> Void)
        -> [UInt8]?
    {
        var buffer = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let outcome = buffer.withUnsafeMutableBytes {
                SenderCheckedRead.receive(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[filled...]))
            }
            guard case .bytes(let got, let sender) = outcome else { return nil }
            guard sender == writer else {
                log(
                    "bytes written by pid \(sender), not by the connection's caller pid \(writer): the connection was closed"
                )
                return nil
            }
            filled += got
        }
        return buffer
    }

    private static func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let wrote = bytes.withUnsafeBytes {
                send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            }
            if wrote < 0 && errno == EINTR { continue }
            guard wrote > 0 else { return false }
            sent += wrote
        }
        return true
    }
}
