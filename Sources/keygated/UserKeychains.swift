import Keygate
import KeygateLinux
import KeygatePolicy
import KeygateStore
import Synchronization

/// One keychain per caller uid, over that uid's own store in its state directory, opened on
/// first use and shared by all of the uid's connections. There is no way to name another
/// uid: the uid comes from ``PeerIdentity``.
///
/// This layer has no prompt relay yet: the keychain's interaction policy is `fail`, so any
/// operation that needs a proof is `errSecInteractionNotAllowed`, as a non-interactive
/// embedded call would be. Failures are counted in memory per uid (persisted next layer).
final class UserKeychains: Sendable {
    private let state: StateDirectory
    private let configuration: Configuration
    private let policies: PolicySet
    private let stores = Mutex<[UInt32: any ItemStore]>([:])
    private let ledgers = Mutex<[UInt32: InMemoryAttemptLedger]>([:])
    private let trails = Mutex<[UInt32: UserAuditTrail]>([:])

    init(state: StateDirectory, configuration: Configuration, policies: PolicySet = .empty) {
        self.state = state
        self.configuration = configuration
        self.policies = policies
    }

    /// The keychain of `identity`'s uid, for a caller that asked for `accessGroups`: the
    /// daemon's rules and grants apply to the caller's executable as the kernel reports it.
    /// - Throws: `errSecNotAvailable` when the uid's directory or store cannot be opened.
    func keychain(for identity: PeerIdentity, accessGroups: [String]) throws(KeygateError) -> Keychain {
        let store = try store(identity.uid)
        return Keychain(
            store: store, accessGroups: accessGroups,
            authenticator: NoPromptAuthenticator(reason: "the daemon does not relay prompts yet"),
            device: device(for: identity),
            organisationPolicy: RulesOrganisationPolicy(policies, program: identity.executable),
            attemptLedger: ledger(identity.uid), defaultInteraction: .fail,
            auditor: try trail(identity.uid).auditor(for: identity))
    }

    /// The uid's audit trail beside its store (anchored in it), one per uid, shared by all of
    /// its connections (``UserAuditTrail``).
    /// - Throws: `errSecNotAvailable` when the uid's directory or store cannot be opened.
    func trail(_ uid: UInt32) throws(KeygateError) -> UserAuditTrail {
        let store = try store(uid)
        return try trails.withLock { trails throws(KeygateError) -> UserAuditTrail in
            if let trail = trails[uid] { return trail }
            guard let anchors = store as? any AuditAnchorStore else {
                throw KeygateError(.internalError, "the store of uid \(uid) keeps no audit anchor")
            }
            let trail = UserAuditTrail(
                uid: uid, directory: state.userDirectoryPath(uid), anchors: anchors,
                maximumFrameLength: configuration.maximumFrameLength)
            trails[uid] = trail
            return trail
        }
    }

    /// The device as the daemon sees it for this caller: the configured mode, the caller's own
    /// logind session (never the client's environment) and the configured enrollment file.
    private func device(for identity: PeerIdentity) -> LinuxDevice {
        var environment: [String: String] = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]
        if let session = identity.session { environment["XDG_SESSION_ID"] = session }
        if let file = configuration.enrollmentFile { environment["KEYGATE_ENROLLMENT_FILE"] = file }
        return LinuxDevice(
            mode: configuration.deviceState, environment: environment,
            onWarning: { Log.line("uid \(identity.uid): \($0)") })
    }

    private func ledger(_ uid: UInt32) -> InMemoryAttemptLedger {
        ledgers.withLock { ledgers in
            if let ledger = ledgers[uid] { return ledger }
            let ledger = InMemoryAttemptLedger()
            ledgers[uid] = ledger
            return ledger
        }
    }

    /// The uid's store, opened once (under the lock, so two first connections open it once).
    private func store(_ uid: UInt32) throws(KeygateError) -> any ItemStore {
        try stores.withLock { stores throws(KeygateError) -> any ItemStore in
            if let store = stores[uid] { return store }
            let directory: String
            do {
                directory = try state.userDirectory(uid)
            } catch {
                throw KeygateError(.notAvailable, "the state directory of uid \(uid) is unusable: \(error)")
            }
            let store = try SQLiteItemStore(path: directory + "/items.db")
            stores[uid] = store
            return store
        }
    }
}
