import FoundationEssentials
import Glibc
import Keygate
import KeygateLinux
import KeygatePAM
import KeygatePolicy
import KeygateStore

/// Everything an item command needs, built from the global options: the embedded store, the
/// audit trail (required), the PAM authenticator, the Linux device and the reuse records.
struct Session {
    let keychain: Keychain
    let context: AuthenticationContext
    let runtime: ProofRecords?
    let storePath: String
    let auditPath: String
    /// The access group the CLI uses: `keygate`, or the one an option names.
    let accessGroup: String
    private let loadedProofs: [Proof]

    static let defaultGroup = "keygate"

    init(_ global: GlobalOptions, accessGroup: String? = nil) throws(KeygateError) {
        storePath = try global.storePath()
        auditPath = try global.auditPath()
        let store = try SQLiteItemStore(path: storePath)
        runtime = LinuxWiring.proofRecords()
        let ledger = FileAttemptLedger(directory: try global.ledgerDirectory())
        let device = LinuxWiring.device(mode: global.deviceState, records: runtime, ledger: ledger)

        var state = AuthenticationState(reuseSeconds: global.reuseSeconds)
        loadedProofs = global.reuseSeconds > 0 ? runtime?.proofs() ?? [] : []
        for proof in loadedProofs { state.proofs.record(proof) }
        let source = global.passphraseSource()
        state.interaction = source == nil ? .fail : .allow
        context = AuthenticationContext(state: state)

        let authenticator: any Authenticator =
            if let source {
                try global.authenticator(source: source)
            } else {
                NoPromptAuthenticator(reason: "no terminal to ask on and no --passphrase-fd")
            }
        self.accessGroup = accessGroup ?? Self.defaultGroup
        let groups =
            self.accessGroup == Self.defaultGroup ? [Self.defaultGroup] : [self.accessGroup, Self.defaultGroup]
        keychain = Keychain(
            store: store, accessGroups: groups, authenticator: authenticator, device: device,
            organisationPolicy: RulesOrganisationPolicy(global.policySet, program: CurrentProcess.executable),
            attemptLedger: ledger,
            auditor: Auditor(
                sink: JSONLinesAuditSink(path: auditPath, anchors: store), isRequired: true,
                executable: CurrentProcess.executable))
    }

    /// The store whose audit anchors `keygate audit` checks the trail against: the store the
    /// options name, when it exists (a missing one is not created).
    static func anchorStore(_ global: GlobalOptions) throws(KeygateError) -> SQLiteItemStore? {
        let path = try global.storePath()
        guard FileManager.default.fileExists(atPath: path) || FileManager.default.fileExists(atPath: path + ".key")
        else { return nil }
        return try SQLiteItemStore(path: path)
    }

    /// Keeps the proofs this invocation made, for the next invocations of the session.
    func finish() {
        let fresh = context.state.proofs.all.filter { !loadedProofs.contains($0) }
        do {
            try runtime?.save(fresh)
        } catch {
            Console.err("keygate: warning: the proof could not be kept for reuse: \(error)")
        }
    }
}
