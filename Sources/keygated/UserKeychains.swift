import Glibc
import Keygate
import KeygateLinux
import KeygatePAM
import KeygatePolicy
import KeygateServing
import KeygateStore
import Synchronization

/// One keychain per caller uid, over that uid's own store in its state directory, opened on
/// first use and shared by all of the uid's connections. There is no way to name another
/// uid: the uid comes from ``PeerIdentity``.
///
/// Proofs come from PAM in the daemon for the peer's account, the conversation relayed over
/// the caller's own connection (``DaemonAuthenticator``, ``PromptRelay``); proofs are reused
/// from the daemon's memory only (``ProofCache``); failures are counted per uid in its state
/// directory (``DaemonAttemptLedger``), one ledger object per uid for all its connections.
final class UserKeychains: Sendable {
    private let state: StateDirectory
    private let configuration: Configuration
    private let policies: PolicySet
    private let stores = Mutex<[UInt32: SQLiteItemStore]>([:])
    private let ledgers = Mutex<[UInt32: DaemonAttemptLedger]>([:])
    /// Prompts waiting at once (`max-prompts`, `max-prompts-per-user`).
    let promptSlots: PromptSlots
    /// The proofs the daemon remembers for reuse.
    let proofs = ProofCache()
    /// The authentication agents registered, one per login session.
    let agents = AgentRegistry()
    private let trails = Mutex<[UInt32: UserAuditTrail]>([:])

    init(state: StateDirectory, configuration: Configuration, policies: PolicySet = .empty) {
        self.state = state
        self.configuration = configuration
        self.policies = policies
        self.promptSlots = PromptSlots(
            total: configuration.maximumPrompts, perUser: configuration.maximumPromptsPerUser)
        watchLocks()
    }

    /// Starts forgetting proofs at a screen lock or logout between requests (``LockWatcher``).
    private func watchLocks() {
        LockWatcher.start(proofs: proofs, watchingLocks: configuration.deviceState == .logind) {
            [configuration] uid, session in
            Self.device(uid: uid, session: session, configuration: configuration)
        }
    }

    /// The keychain of `identity`'s uid, for a caller that asked for `accessGroups`: the
    /// daemon's rules and grants apply to the caller's executable as the kernel reports it.
    /// Proofs are asked through `relay`, the caller's own connection; without one nobody can
    /// be asked (interaction `fail`: a read that needs a proof is `errSecInteractionNotAllowed`).
    /// - Throws: `errSecNotAvailable` when the uid's directory or store cannot be opened.
    func keychain(for identity: PeerIdentity, accessGroups: [String], relay: PromptRelay? = nil)
        throws(KeygateError) -> CallerKeychain
    {
        let store = try store(identity.uid)
        let ledger = try ledger(identity.uid)
        let relayed = relay.map { relay in
            DaemonAuthenticator(
                identity: identity, relay: relay,
                shared: AuthenticationServices(slots: promptSlots, proofs: proofs, agents: agents),
                configuration: PAMAuthenticator.Configuration())
        }
        let authenticator: any Authenticator =
            relayed ?? NoPromptAuthenticator(reason: "this connection has no prompt relay")
        let device = RequestScopedDevice(device(for: identity))
        let keychain = Keychain(
            store: store, accessGroups: accessGroups, authenticator: authenticator, device: device,
            organisationPolicy: RulesOrganisationPolicy(policies, program: identity.program),
            attemptLedger: ledger, defaultInteraction: relay == nil ? .fail : .allow,
            auditor: try trail(identity.uid).auditor(for: identity))
        return CallerKeychain(keychain: keychain, device: device, authenticator: relayed)
    }

    /// The uid's audit trail beside its store (anchored in it), one per uid, shared by all of
    /// its connections (``UserAuditTrail``).
    /// - Throws: `errSecNotAvailable` when the uid's directory or store cannot be opened.
    func trail(_ uid: UInt32) throws(KeygateError) -> UserAuditTrail {
        let store = try store(uid)
        return try trails.withLock { trails throws(KeygateError) -> UserAuditTrail in
            if let trail = trails[uid] { return trail }
            let trail = UserAuditTrail(
                uid: uid, directory: state.userDirectoryPath(uid), anchors: store,
                maximumFrameLength: configuration.maximumFrameLength)
            trails[uid] = trail
            return trail
        }
    }

    /// The device as the daemon sees it for this caller: the configured mode, the caller's own
    /// logind session (never the client's environment) and the configured enrollment file.
    private func device(for identity: PeerIdentity) -> LinuxDevice {
        Self.device(uid: identity.uid, session: identity.session, configuration: configuration)
    }

    private static func device(uid: UInt32, session: String?, configuration: Configuration) -> LinuxDevice {
        // The caller's session as the kernel gave it; the daemon's own bus (its unit's
        // environment, never a client's); fprintd asked about the caller's fingers, never root's.
        LinuxDevice(
            mode: configuration.deviceState,
            sources: DeviceSources(
                session: session, systemBus: systemBus, enrollmentFile: configuration.enrollmentFile),
            enrollmentUser: uid, onWarning: { Log.line("uid \(uid): \($0)") })
    }

    /// The system bus the daemon was started with (`DBUS_SYSTEM_BUS_ADDRESS`), read once.
    private static let systemBus: String? = getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) }

    /// The uid's persistent failure counters, one object per uid (so parallel connections
    /// count under one lock).
    private func ledger(_ uid: UInt32) throws(KeygateError) -> DaemonAttemptLedger {
        try ledgers.withLock { ledgers throws(KeygateError) -> DaemonAttemptLedger in
            if let ledger = ledgers[uid] { return ledger }
            let ledger = DaemonAttemptLedger(path: try directory(uid) + "/attempts")
            ledgers[uid] = ledger
            return ledger
        }
    }

    /// The uid's store, opened once (under the lock, so two first connections open it once).
    private func store(_ uid: UInt32) throws(KeygateError) -> SQLiteItemStore {
        try stores.withLock { stores throws(KeygateError) -> SQLiteItemStore in
            if let store = stores[uid] { return store }
            let store = try SQLiteItemStore(path: try directory(uid) + "/items.db")
            stores[uid] = store
            return store
        }
    }

    /// The uid's own directory in the state directory, made when missing.
    /// - Throws: `errSecNotAvailable` when it cannot be made or used.
    private func directory(_ uid: UInt32) throws(KeygateError) -> String {
        do {
            return try state.userDirectory(uid)
        } catch {
            throw KeygateError(.notAvailable, "the state directory of uid \(uid) is unusable: \(error)")
        }
    }
}
