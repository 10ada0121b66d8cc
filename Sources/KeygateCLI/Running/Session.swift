import Keygate
import KeygateLinux
import KeygatePAM
import KeygatePolicy
import KeygateStore

/// The keychain an item command works on, with its authentication context and access group:
/// the embedded ``Keychain`` or, in daemon mode, `KeygateClient` (``DaemonWiring``), through
/// the one protocol both conform to.
struct Session {
    /// The gated keychain, in this process or in the daemon.
    let keychain: any KeychainAccess
    /// The context the command's operations share (one proof serves the whole command; through
    /// the daemon, only its reuse window and interaction policy are sent).
    let context: AuthenticationContext
    /// The access group the CLI uses: `keygate`, or the one an option names.
    let accessGroup: String
    /// Called once when the command is done: keeps the proofs it made for reuse.
    let finish: () -> Void

    /// The access group used when no option names one.
    static let defaultGroup = "keygate"

    // MARK: - Item operations

    /// Adds an item (``Keychain/add(_:context:)``).
    func add(_ request: AddRequest) async throws(KeygateError) {
        try await keychain.add(request, context: context)
    }

    /// The items `query` matches (``Keychain/copyMatching(_:context:)``).
    func copyMatching(_ query: ItemQuery) async throws(KeygateError) -> [MatchedItem] {
        try await keychain.copyMatching(query, context: context)
    }

    /// Changes the items `query` matches (``Keychain/update(_:changes:context:)``).
    func update(_ query: ItemQuery, changes: ItemChanges) async throws(KeygateError) {
        try await keychain.update(query, changes: changes, context: context)
    }

    /// Deletes the items `query` matches (``Keychain/delete(_:context:)``).
    func delete(_ query: ItemQuery) async throws(KeygateError) {
        try await keychain.delete(query, context: context)
    }

    /// The embedded keychain, for what only it does (`export`, `import`).
    /// - Throws: `errSecUnimplemented` through the daemon (the commands refuse daemon mode first).
    var embeddedKeychain: Keychain {
        get throws(KeygateError) {
            guard let keychain = keychain as? Keychain else {
                throw KeygateError(.unimplemented, "keygated does not serve backups")
            }
            return keychain
        }
    }

    /// The groups a keychain for `accessGroup` sees: that group, and the CLI's own.
    static func groups(for accessGroup: String) -> [String] {
        accessGroup == defaultGroup ? [defaultGroup] : [accessGroup, defaultGroup]
    }
}

/// Opens the session an item command works in: the user's store through PAM in the process,
/// or whatever a test injects.
struct KeychainFactory: Sendable {
    /// Opens the session for the global options and access group; `console` takes warnings.
    let open: @Sendable (GlobalOptions, _ accessGroup: String, Console) async throws(KeygateError) -> Session

    /// In daemon mode the daemon's session (``DaemonWiring``); embedded, the store, its required
    /// audit trail, the PAM authenticator, the Linux device and the session's reuse records.
    static let live = KeychainFactory { global, accessGroup, console async throws(KeygateError) in
        if case .daemon = global.mode {
            return try DaemonWiring.open(global, accessGroup: accessGroup)
        }
        let paths = try global.store.paths()
        // Asked before the store opens: in a login session, logind answers while it opens.
        let environment = LinuxWiring.deviceEnvironment
        let lockState = LinuxDevice.askLockState(mode: global.device.mode, environment: environment)
        let store = try SQLiteItemStore(path: paths.store)
        let runtime = LinuxWiring.proofRecords(console)
        let ledger = paths.ledger(reportingTo: console)
        let device = LinuxWiring.device(
            mode: global.device.mode, environment: environment, askedAhead: lockState, records: runtime, ledger: ledger,
            console: console)

        var state = AuthenticationState(reuseSeconds: global.device.reuseSeconds)
        let loadedProofs = runtime?.reusableProofs(within: global.device.reuseSeconds) ?? []
        for proof in loadedProofs { state.proofs.record(proof) }
        let source = global.pam.passphraseSource()
        state.interaction = source == nil ? .fail : .allow
        let context = AuthenticationContext(state: state)

        let authenticator: any Authenticator =
            if let source {
                try global.pam.authenticator(source: source, ledger: ledger)
            } else {
                NoPromptAuthenticator(reason: "no terminal to ask on and no --passphrase-fd")
            }
        let keychain = Keychain(
            store: store, accessGroups: Session.groups(for: accessGroup), authenticator: authenticator,
            device: device,
            organisationPolicy: RulesOrganisationPolicy(global.policySet, program: CurrentProcess.executable),
            attemptLedger: ledger,
            auditor: Auditor(
                sink: JSONLinesAuditSink(path: paths.audit, anchors: store), isRequired: true,
                executable: CurrentProcess.executable))
        return Session(keychain: keychain, context: context, accessGroup: accessGroup) {
            let fresh = context.state.proofs.all.filter { !loadedProofs.contains($0) }
            do {
                try runtime?.save(fresh)
            } catch {
                console.err("keygate: warning: the proof could not be kept for reuse: \(error)")
            }
        }
    }
}
