import Keygate
import KeygateAudit
import KeygateItems
import KeygateLinux
import KeygatePAM
import KeygatePolicy
import KeygateSSHAgent
import KeygateStore
import Synchronization

/// The embedded SSH agent's way into the gate: for each request, a keychain over the user's
/// own store whose organisation rules see the requesting program, whose audit records name it
/// as the caller, and whose proofs are asked on the agent's own terminal, descriptor or askpass
/// with the requester named above each question.
///
/// Proofs are kept per requesting program for the `--reuse-seconds` window (none by default);
/// a signature for a forwarded agent never reuses one.
final class EmbeddedSSHAgentBackend: SSHAgentBackend {
    let store: SQLiteItemStore
    let accessGroups: [String]
    let device: LinuxDevice
    let ledger: FileAttemptLedger
    let policies: PolicySet
    let sink: any AuditSink
    let source: (any PassphraseSource)?
    let pam: PAMOptions
    let reuseSeconds: Int
    let console: Console
    private let turn = QuestionTurn()
    /// The proofs each program's requests made, for reuse within the window.
    private let proofs = Mutex([String: [Proof]]())

    init(
        store: SQLiteItemStore, accessGroups: [String], device: LinuxDevice, ledger: FileAttemptLedger,
        policies: PolicySet, sink: any AuditSink, source: (any PassphraseSource)?, pam: PAMOptions, reuseSeconds: Int,
        console: Console
    ) {
        self.store = store
        self.accessGroups = accessGroups
        self.device = device
        self.ledger = ledger
        self.policies = policies
        self.sink = sink
        self.source = source
        self.pam = pam
        self.reuseSeconds = reuseSeconds
        self.console = console
    }

    /// The keychain one request of `peer` runs on.
    private func keychain(for peer: SSHAgentPeer) throws(KeygateError) -> Keychain {
        let authenticator: any Authenticator =
            if let source {
                try pam.authenticator(
                    source: RequesterPassphraseSource(
                        base: source, speaker: "keygate ssh-agent", program: peer.executable, pid: peer.pid,
                        turn: turn, console: console),
                    ledger: ledger)
            } else {
                NoPromptAuthenticator(reason: "the agent has no terminal, --passphrase-fd or askpass to ask on")
            }
        return Keychain(
            store: store, accessGroups: accessGroups, authenticator: authenticator, device: device,
            organisationPolicy: RulesOrganisationPolicy(policies, program: peer.program), attemptLedger: ledger,
            auditor: Auditor(
                sink: sink, isRequired: true, executable: CurrentProcess.executable,
                caller: AuditCaller(userID: peer.uid, processID: peer.pid, executable: peer.executable)))
    }

    func keys(for peer: SSHAgentPeer) async throws(KeygateError) -> [KeyFields] {
        do {
            return try await keychain(for: peer).keys(matching: KeyQuery())
        } catch  where error.status == .itemNotFound {
            return []
        }
    }

    func sign(
        _ data: [UInt8], with key: KeyFields, for peer: SSHAgentPeer, destination: SSHDestination?, forwarded: Bool
    ) async throws(KeygateError) -> [UInt8] {
        var state = AuthenticationState(reuseSeconds: forwarded ? 0 : reuseSeconds)
        state.interaction = source == nil ? .fail : .allow
        let earlier = forwarded ? [] : proofs.withLock { $0[peer.executable] ?? [] }
        for proof in earlier { state.proofs.record(proof) }
        let context = AuthenticationContext(state: state)
        let algorithm: SignatureAlgorithm = key.type == .p256 ? .ecdsaSignatureMessageX962SHA256 : .ed25519
        defer {
            if !forwarded && reuseSeconds > 0 {
                let made = context.state.proofs.all
                proofs.withLock { $0[peer.executable] = made }
            }
        }
        return try await keychain(for: peer).sign(
            data, algorithm: algorithm,
            key: KeyQuery(
                applicationLabel: key.applicationLabel, type: key.type, accessGroup: key.accessGroup,
                operationPrompt: "SSH signature with key \(key.label ?? key.applicationLabelHex)"),
            context: context, notes: destination.map { [.destination($0.description)] } ?? [])
    }
}
