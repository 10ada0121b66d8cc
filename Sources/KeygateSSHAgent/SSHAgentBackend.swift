public import KeygateItems
public import KeygatePolicy

/// Who is asking the agent, from the kernel (the connection's peer credentials and pidfd),
/// never from anything the client sends.
public struct SSHAgentPeer: Hashable, Sendable {
    /// The caller's uid.
    public let uid: UInt32
    /// The caller's pid.
    public let pid: Int32
    /// The caller's executable, as `/proc/<pid>/exe` names it.
    public let executable: String
    /// The executable as a program rule may name it: nil when the caller is in other
    /// namespaces, where any file can sit at any path.
    public let program: String?

    /// A peer.
    public init(uid: UInt32, pid: Int32, executable: String, program: String?) {
        self.uid = uid
        self.pid = pid
        self.executable = executable
        self.program = program
    }
}

/// Where a signature is for: the server's host key, as a verified
/// `session-bind@openssh.com` named it.
public struct SSHDestination: Hashable, Sendable, CustomStringConvertible {
    /// The host key's fingerprint, `SHA256:…` as `ssh-keygen -l` prints it.
    public let hostKeyFingerprint: String
    /// The host key's type (`ssh-ed25519`, `ecdsa-sha2-nistp256`).
    public let hostKeyType: String
    /// Whether the binding was for a forwarded agent (the signature is made for a session of
    /// another host than the one the client is on).
    public let forwarded: Bool

    /// `SHA256:… (ssh-ed25519)`, with `, forwarded` for a forwarded agent.
    public var description: String {
        "\(hostKeyFingerprint) (\(hostKeyType)\(forwarded ? ", forwarded" : ""))"
    }
}

/// What the agent asks of Keygate: the keys a peer may see, and signatures gated by each key's
/// access control. The embedded agent's backend is the user's own keychain; the broker's is
/// `keygated`, which sees the same peer from the kernel itself.
public protocol SSHAgentBackend: Sendable {
    /// The keys `peer` is offered (their public halves and labels only).
    func keys(for peer: SSHAgentPeer) async throws(KeygateError) -> [KeyFields]
    /// Signs `data` with `key` for `peer` once the key's access control allows it; `destination`
    /// is where the signature is for when the connection was bound, and `forwarded` whether any
    /// binding of the connection was for a forwarded agent (then no earlier proof is reused).
    /// - Returns: the keeper's signature (DER X9.62 for P-256, 64 bytes for Ed25519).
    func sign(
        _ data: [UInt8], with key: KeyFields, for peer: SSHAgentPeer, destination: SSHDestination?, forwarded: Bool
    ) async throws(KeygateError) -> [UInt8]
}
