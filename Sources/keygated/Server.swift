import CKeygated
import CPeer
import Dispatch
import Glibc
import KeygatePolicy
import KeygateProtocol
import KeygateServing
import Synchronization

/// The listening socket and the accept loop.
///
/// The socket is bound under a temporary name beside `PATH`, made mode 0666 (anyone local may
/// connect; the daemon decides), put in listening state and only then renamed to `PATH`: the
/// socket file existing means the daemon is ready. Each accepted connection gets its identity
/// from the kernel and a thread of its own (the one that accepted it; threads are kept for
/// later connections); connections beyond the global or the per-uid
/// limit get an error frame (`errSecAllocate`) and are closed at once.
final class Server: Sendable {
    private let path: String
    private let keychains: UserKeychains
    private let configuration: Configuration
    private let counts = Mutex<(total: Int, perUser: [UInt32: Int])>((0, [:]))
    private let forcePidfdFallback: Bool
    /// Connection threads waiting for the turn to accept, and the turn itself.
    private let idle = Mutex(0)
    private let acceptTurn = DispatchSemaphore(value: 0)

    init(path: String, keychains: UserKeychains, configuration: Configuration, forcePidfdFallback: Bool) {
        self.path = path
        self.keychains = keychains
        self.configuration = configuration
        self.forcePidfdFallback = forcePidfdFallback
    }

    /// Binds and listens. Something at `PATH` that is not a socket is refused (never replaced),
    /// and so is a socket another daemon still answers on; a stale socket is replaced.
    /// - Throws: ``StartupError`` naming the path.
    func listen() throws(StartupError) -> Int32 {
        let temporary = path + ".\(getpid()).new"
        guard let address = UnixSocketAddress(path: path), let temporaryAddress = UnixSocketAddress(path: temporary)
        else {
            throw StartupError(
                "\(path): socket path too long (at most \(UnixSocketAddress.maximumPathLength - 20) bytes)")
        }
        var existing = stat()
        if lstat(path, &existing) == 0 {
            guard existing.st_mode & S_IFMT == S_IFSOCK else {
                throw StartupError("\(path): exists and is not a socket; not replaced")
            }
            let probe = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            defer { close(probe) }
            guard address.connect(probe) != 0 else {
                throw StartupError("\(path): another daemon is listening on it")
            }
        }
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw StartupError("socket() failed (errno \(errno))") }
        unlink(temporary)
        let bound = temporaryAddress.bind(fd)
        guard bound == 0 else {
            close(fd)
            throw StartupError("\(path): cannot bind (errno \(errno))")
        }
        // Before any client can connect: every connection then names, with each chunk read, the
        // process that sent it (FrameReader refuses bytes from any other than the one that connected).
        guard keygate_pass_credentials(fd) == 0, chmod(temporary, 0o666) == 0, Glibc.listen(fd, 512) == 0,
            rename(temporary, path) == 0
        else {
            let code = errno
            unlink(temporary)
            close(fd)
            throw StartupError("\(path): cannot listen (errno \(code))")
        }
        return fd
    }

    /// Accepts forever, on this thread and the connection threads (leader and followers): the
    /// thread that accepts a connection hands the turn to accept to an idle connection thread
    /// (or starts one when none is idle) and serves the connection itself, so a connection
    /// reaches its hello without a thread created or woken on its way. A thread whose
    /// connection ended waits for the turn again; beyond ``idleThreads`` idle ones it ends.
    func run(listening fd: Int32) -> Never {
        lead(fd, holdingTurn: true, mayEnd: false)
        fatalError("the accepting thread never ends")
    }

    /// How many connection threads may wait idle for the turn to accept.
    static let idleThreads = 8

    /// One connection thread's life: take the turn, accept, hand the turn on, serve, repeat.
    private func lead(_ fd: Int32, holdingTurn: Bool, mayEnd: Bool) {
        var holding = holdingTurn
        while true {
            if !holding { acceptTurn.wait() }
            holding = true
            let client = PeerIdentity.accept(fd)
            if client < 0 {
                if errno != EINTR { Log.line("accept failed (errno \(errno))") }
                if errno == EMFILE || errno == ENFILE { usleep(100_000) }
                continue
            }
            let accepted = PeerIdentity.acceptedNow()
            guard handTurnOn(fd) else {
                // Nobody else could accept: this thread keeps the turn; the connection is refused.
                Log.line("no thread for a new connection; closed")
                close(client)
                continue
            }
            holding = false
            serve(client, acceptedTicks: accepted)
            let waits = idle.withLock { idle -> Bool in
                guard !mayEnd || idle < Self.idleThreads else { return false }
                idle += 1
                return true
            }
            if !waits { return }
        }
    }

    /// Gives the turn to accept to an idle thread, or to a new one; false when none could be made.
    private func handTurnOn(_ fd: Int32) -> Bool {
        let wake = idle.withLock { idle -> Bool in
            guard idle > 0 else { return false }
            idle -= 1
            return true
        }
        if wake {
            acceptTurn.signal()
            return true
        }
        return Threads.detach { [self] in lead(fd, holdingTurn: true, mayEnd: true) }
    }

    private func serve(_ client: Int32, acceptedTicks: UInt64) {
        let identity: PeerIdentity
        let pidfd: Int32
        do throws(PeerIdentityError) {
            (identity, pidfd) = try PeerIdentity.establish(
                socket: client, acceptedTicks: acceptedTicks, forceFallback: forcePidfdFallback,
                session: Self.session(of:))
        } catch {
            Log.line("connection refused: \(error)")
            refuse(client, KeygateError(.notAvailable, "the caller's identity could not be established"))
            return
        }
        guard admit(identity.uid) else {
            Log.line("uid \(identity.uid) pid \(identity.pid): connection limit reached; refused")
            refuse(client, KeygateError(.allocate, "too many connections"))
            close(pidfd)
            return
        }
        defer { release(identity.uid) }
        Connection(
            socket: client, identity: identity, pidfd: pidfd, nonce: ChallengeNonce.fresh(), keychains: keychains,
            configuration: configuration
        ).serve()
    }

    private func admit(_ uid: UInt32) -> Bool {
        counts.withLock { counts in
            guard counts.total < configuration.maximumConnections,
                counts.perUser[uid, default: 0] < configuration.maximumConnectionsPerUser
            else { return false }
            counts.total += 1
            counts.perUser[uid, default: 0] += 1
            return true
        }
    }

    private func release(_ uid: UInt32) {
        counts.withLock { counts in
            counts.total -= 1
            counts.perUser[uid, default: 1] -= 1
            if counts.perUser[uid] == 0 { counts.perUser[uid] = nil }
        }
    }

    /// Sends one error frame (best effort, never blocking long) and closes.
    private func refuse(_ client: Int32, _ error: KeygateError) {
        if let bytes = try? Message(error).frame(requestID: 0).encoded() {
            _ = bytes.withUnsafeBytes { send(client, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        }
        close(client)
    }
}

extension Server {
    /// The logind session of `pid` (sd-login), nil for a process in none.
    @Sendable static func session(of pid: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard keygated_pid_session(pid, &buffer, Int32(buffer.count)) == 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
