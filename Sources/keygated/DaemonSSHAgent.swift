import Glibc
import Keygate
import KeygateAudit
import KeygateItems
import KeygatePolicy
import KeygateProtocol
import KeygateSSHAgent
import KeygateServing
import Synchronization

/// An SSH agent connection handed to the daemon (`sshAgentConnection`, its socket passed by
/// the user's `keygate ssh-agent`), served here to its end: the keys are the daemon's, the
/// requester is the process the kernel names as the socket's peer (never the process that
/// passed it), and each proof is asked of the requester's session's authentication agent.
///
/// Why passing a socket cannot impersonate a program: the peer credentials of a Unix socket are
/// fixed by the kernel when the peer connects, and every byte read from it was written by that
/// peer's end. A process can pass only sockets it holds: one it connected itself (its own
/// identity), or one a program connected to it (that program's identity, whose requests are
/// then that program's own; the passer cannot add bytes to them, since what it writes goes to
/// the program, not to the daemon). The peer must be of the passer's uid and must still run the
/// executable it connected with (checked at each request).
struct DaemonSSHAgent: Sendable {
    let keychains: UserKeychains
    let configuration: Configuration

    /// The most handed-off agent connections served at once, over all uids.
    static let maximumConnections = 256
    /// The most served at once for one uid (so one user cannot take them all).
    static let maximumConnectionsPerUser = 64
    /// The connections served now, per uid.
    private static let connections = Mutex([UInt32: Int]())

    /// Takes over `socket` for the passer `passer`: checks who its peer is and serves it on a
    /// thread of its own, a proof of the peer's terminal standing for `reuseSeconds`.
    /// - Throws: `errSecParam` for a reuse window above 300 s or a descriptor that is not a
    ///   connected Unix stream socket,
    ///   `errSecAuthFailed` for a peer of another uid, `errSecAllocate` past either limit; the
    ///   socket is then closed.
    func takeOver(_ socket: Int32, from passer: PeerIdentity, accessGroups: [String], reuseSeconds: UInt32)
        throws(KeygateError)
    {
        // Until the serving thread owns them, every way out closes what was opened.
        var pidfd: Int32 = -1
        var counted = false
        var handedOn = false
        defer {
            if !handedOn {
                if counted { Self.release(passer.uid) }
                if pidfd >= 0 { close(pidfd) }
                close(socket)
            }
        }
        let reuse = try ReuseWindow(seconds: reuseSeconds)
        var type: Int32 = 0
        var domain: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(socket, SOL_SOCKET, SO_TYPE, &type, &length) == 0, type == Int32(SOCK_STREAM.rawValue),
            getsockopt(socket, SOL_SOCKET, SO_DOMAIN, &domain, &length) == 0, domain == AF_UNIX
        else { throw KeygateError(.param, "the descriptor handed over is not a Unix stream socket") }
        let peer: PeerIdentity
        do throws(PeerIdentityError) {
            (peer, pidfd) = try PeerIdentity.establish(
                socket: socket, acceptedTicks: PeerIdentity.acceptedNow(), session: Server.session(of:))
        } catch {
            throw KeygateError(.param, "the handed-over connection's caller cannot be established: \(error)")
        }
        guard peer.uid == passer.uid else {
            throw KeygateError(
                .authFailed, "the handed-over connection's caller is uid \(peer.uid), not the passer's \(passer.uid)")
        }
        counted = Self.connections.withLock { counts in
            let total = counts.values.reduce(0, +)
            guard total < Self.maximumConnections, counts[peer.uid, default: 0] < Self.maximumConnectionsPerUser
            else { return false }
            counts[peer.uid, default: 0] += 1
            return true
        }
        guard counted else {
            throw KeygateError(
                .allocate,
                "too many SSH agent connections (at most \(Self.maximumConnectionsPerUser) a uid, "
                    + "\(Self.maximumConnections) in all)")
        }
        let backend = try Backend(
            peer: peer, pidfd: pidfd, keychains: keychains, configuration: configuration,
            accessGroups: accessGroups, reuse: reuse)
        Log.line("uid \(peer.uid) pid \(peer.pid) (\(peer.executable)): SSH agent connection taken over")
        let pinned = pidfd
        handedOn = Threads.detach {
            SSHAgentConnection.serve(socket, identity: peer, pidfd: pinned, backend: backend) {
                Log.line("uid \(peer.uid) pid \(peer.pid): ssh-agent: \($0)")
            }
            Self.release(peer.uid)
            close(pinned)
            close(socket)
        }
        guard handedOn else { throw KeygateError(.allocate, "no thread could be made for the SSH agent connection") }
    }

    /// One connection of `uid` ended.
    private static func release(_ uid: UInt32) {
        connections.withLock { counts in
            counts[uid, default: 1] -= 1
            if counts[uid] == 0 { counts[uid] = nil }
        }
    }

    /// The agent's way into the peer's keychain: requests with no prompt channel of their own
    /// (the SSH agent protocol has none), so proofs go to the session's authentication agent.
    /// A proof made for one signature stands for the next ones of the same uid, logind session
    /// and terminal (the daemon's ``ProofCache``, as for the Keygate socket) within the window
    /// the hand-off asked for; a signature for a forwarded agent neither reuses nor asks for one.
    final class Backend: SSHAgentBackend {
        let keychain: CallerKeychain
        let relay: PromptRelay
        let caller: DaemonCaller
        let reuse: ReuseWindow

        init(
            peer: PeerIdentity, pidfd: Int32, keychains: UserKeychains, configuration: Configuration,
            accessGroups: [String], reuse: ReuseWindow
        ) throws(KeygateError) {
            // The relay carries the request in flight to the authenticator (which then asks the
            // session's agent): the agent protocol has no prompt channel of its own.
            relay = PromptRelay(timeoutSeconds: configuration.promptTimeoutSeconds)
            caller = DaemonCaller(identity: peer, pidfd: pidfd)
            self.reuse = reuse
            keychain = try keychains.keychain(
                for: peer, accessGroups: accessGroups.isEmpty ? ["keygate"] : accessGroups, relay: relay)
        }

        func keys(for peer: SSHAgentPeer) async throws(KeygateError) -> [KeyFields] {
            do {
                return try await keychain.keychain.keys(matching: KeyQuery())
            } catch  where error.status == .itemNotFound {
                return []
            }
        }

        func sign(
            _ data: [UInt8], with key: KeyFields, for peer: SSHAgentPeer, destination: SSHDestination?,
            forwarded: Bool
        ) async throws(KeygateError) -> [UInt8] {
            let algorithm: SignatureAlgorithm = key.type == .p256 ? .ecdsaSignatureMessageX962SHA256 : .ed25519
            let query = KeyQuery(
                applicationLabel: key.applicationLabel, type: key.type, accessGroup: key.accessGroup,
                operationPrompt: "SSH signature with key \(key.label ?? key.applicationLabelHex)")
            let window = forwarded ? 0 : UInt32(reuse.seconds)
            guard
                let request = try DaemonRequest(
                    .sign(input: data, algorithm: algorithm, key: query, reuseSeconds: window), caller: caller,
                    frontend: .sshAgent)
            else { throw KeygateError(.internalError, "a signature is a request") }
            relay.begin(PromptRelay.Scope(requestID: 1, request: request))
            defer { relay.finish() }
            keychain.device.begin()
            let context = keychain.authenticator?.reuseContext(for: request, device: keychain.device)
            return try await keychain.keychain.sign(
                data, algorithm: algorithm, key: query, context: context,
                notes: destination.map { [.destination($0.description)] } ?? [])
        }
    }
}
