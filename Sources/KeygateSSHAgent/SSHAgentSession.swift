import KeygateItems
import KeygateKeys
public import KeygatePolicy

/// One agent connection's state and answers: what a frame asks, checked, and the reply.
///
/// Every refusal is a reply (`SSH_AGENT_FAILURE`, `SSH_AGENT_EXTENSION_FAILURE`) and a line
/// for the session's log, never a hang; the connection is closed only for what the protocol cannot
/// survive (a frame that does not parse).
public struct SSHAgentSession: Sendable {
    /// The caller, from the kernel.
    public let peer: SSHAgentPeer
    private let backend: any SSHAgentBackend
    private let log: @Sendable (String) -> Void
    /// The `session-bind@openssh.com` bindings, oldest first.
    private(set) var bindings: [(sessionID: [UInt8], destination: SSHDestination)] = []

    /// The most bindings one connection may make (OpenSSH keeps 16).
    static let maximumBindings = 16

    /// A session for `peer`'s connection.
    public init(peer: SSHAgentPeer, backend: any SSHAgentBackend, log: @escaping @Sendable (String) -> Void) {
        self.peer = peer
        self.backend = backend
        self.log = log
    }

    /// The reply to one frame's payload.
    /// - Throws: `errSecParam` for a frame that does not parse: the caller closes the connection.
    public mutating func reply(to payload: [UInt8]) async throws(KeygateError) -> [UInt8] {
        switch try SSHAgentRequest(payload: payload) {
        case .requestIdentities:
            return await identities()
        case .sign(let blob, let data, let flags):
            return await sign(blob, data, flags: flags)
        case .extension(let name, let contents):
            return handleExtension(name, contents)
        case .refused(_, let reason):
            log(reason)
            return SSHAgentReply.failure
        }
    }

    private func identities() async -> [UInt8] {
        do {
            let keys = try await backend.keys(for: peer)
            var answer: [(blob: [UInt8], comment: String)] = []
            for key in keys {
                guard let publicKey = try? PublicKey(type: key.type, bytes: key.publicKey) else { continue }
                answer.append((publicKey.openSSHBlob, key.label ?? ""))
            }
            return SSHAgentReply.identities(answer)
        } catch {
            log("listing keys failed: \(error)")
            return SSHAgentReply.failure
        }
    }

    private func sign(_ blob: [UInt8], _ data: [UInt8], flags: UInt32) async -> [UInt8] {
        // Flags ask for rsa-sha2-256 / -512 (2, 4): meaningful only for RSA keys, which the
        // keeper does not make; any other bit is unknown. Either is refused, never ignored.
        guard flags == 0 else {
            log("a sign request with flags \(flags) is refused: only ECDSA and Ed25519 keys are served")
            return SSHAgentReply.failure
        }
        let keys: [KeyFields]
        do {
            keys = try await backend.keys(for: peer)
        } catch {
            log("listing keys failed: \(error)")
            return SSHAgentReply.failure
        }
        guard
            let key = keys.first(where: { key in
                (try? PublicKey(type: key.type, bytes: key.publicKey))?.openSSHBlob == blob
            })
        else {
            log("a sign request names a key this agent does not hold")
            return SSHAgentReply.failure
        }
        if let bound = bindings.last, !bound.destination.forwarded, !Self.names(session: bound.sessionID, data) {
            log("a sign request for another session than the one the connection is bound to is refused")
            return SSHAgentReply.failure
        }
        do {
            let signature = try await backend.sign(
                data, with: key, for: peer, destination: bindings.last?.destination,
                forwarded: bindings.contains { $0.destination.forwarded })
            return SSHAgentReply.signature(try SSHSignature(type: key.type, keeperForm: signature).blob())
        } catch {
            log(
                "signing with '\(key.label ?? key.applicationLabelHex)' for \(peer.executable) (pid \(peer.pid)) refused: \(error)"
            )
            return SSHAgentReply.failure
        }
    }

    /// Whether `data` (a user-authentication request, RFC 4252 §7) starts with `session`.
    private static func names(session: [UInt8], _ data: [UInt8]) -> Bool {
        var reader = SSHWireReader(data)
        return (try? reader.bytes("the session identifier")) == session
    }

    private mutating func handleExtension(_ name: String, _ contents: [UInt8]) -> [UInt8] {
        switch name {
        case "query":
            return SSHAgentReply.query(["query", "session-bind@openssh.com"])
        case "session-bind@openssh.com":
            do throws(KeygateError) {
                try bind(contents)
                return SSHAgentReply.success
            } catch {
                log("session-bind@openssh.com refused: \(error.message)")
                return SSHAgentReply.extensionFailure
            }
        default:
            log("extension '\(name)' is not served")
            return SSHAgentReply.extensionFailure
        }
    }

    /// Checks and records a binding (OpenSSH's PROTOCOL.agent §1): the host key's signature of
    /// the session identifier must verify; a session is bound once; a connection bound for
    /// authentication is never bound again.
    private mutating func bind(_ contents: [UInt8]) throws(KeygateError) {
        var reader = SSHWireReader(contents)
        let hostKeyBlob = try reader.bytes("the host key")
        let sessionID = try reader.bytes("the session identifier")
        let signatureBlob = try reader.bytes("the host key's signature")
        let forwarding = try reader.byte("is_forwarding")
        guard reader.isAtEnd else { throw KeygateError(.param, "bytes after the binding") }
        guard forwarding <= 1 else { throw KeygateError(.param, "is_forwarding is \(forwarding), not a boolean") }
        if bindings.contains(where: { !$0.destination.forwarded }) {
            throw KeygateError(.param, "the connection is bound for authentication already")
        }
        guard !bindings.contains(where: { $0.sessionID == sessionID }) else {
            throw KeygateError(.param, "the session is bound already")
        }
        guard bindings.count < Self.maximumBindings else {
            throw KeygateError(.param, "more than \(Self.maximumBindings) bindings on one connection")
        }
        let hostKey = try SSHHostKey(openSSHBlob: hostKeyBlob)
        guard try hostKey.isValidSignature(signatureBlob, of: sessionID) else {
            throw KeygateError(.param, "the host key's signature of the session identifier does not verify")
        }
        bindings.append(
            (
                sessionID,
                SSHDestination(
                    hostKeyFingerprint: PublicKey.fingerprint(ofOpenSSHBlob: hostKeyBlob),
                    hostKeyType: hostKey.openSSHType, forwarded: forwarding == 1)
            ))
    }
}
