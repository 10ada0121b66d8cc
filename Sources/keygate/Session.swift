import Foundation
import Keygate
import KeygatePAM
import KeygatePolicy
import KeygateStore

/// Everything an item command needs, built from the global options: the embedded store, the
/// audit trail (required), the PAM authenticator, the Linux device and the reuse records.
struct Session {
    let keychain: Keychain
    let context: AuthenticationContext
    let runtime: RuntimeRecords?
    let attempts: AttemptRecords
    let storePath: String
    let auditPath: String
    /// The access group the CLI uses: `keygate`, or the one an option names.
    let accessGroup: String

    static let defaultGroup = "keygate"

    init(_ global: GlobalOptions, accessGroup: String? = nil) throws(KeygateError) {
        let directory = try SQLiteItemStore.defaultDirectory()
        storePath = global.store ?? directory + "/items.db"
        auditPath = global.audit ?? (storePath as NSString).deletingLastPathComponent + "/audit.jsonl"
        try Self.checkPolicies(global.policies)
        let store = try SQLiteItemStore(path: storePath)
        runtime = try RuntimeRecords.open()
        let device = try LinuxDevice(mode: LinuxDevice.mode(option: global.deviceState), runtime: runtime)
        attempts = AttemptRecords(path: storePath + ".attempts")

        var state = AuthenticationState(reuseSeconds: global.reuseSeconds)
        state.attempts = attempts.load()
        if global.reuseSeconds > 0, let runtime {
            for proof in runtime.proofs() { state.proofs.record(proof) }
        }
        let source = global.passphraseSource()
        state.interaction = source == nil ? .fail : .allow
        context = AuthenticationContext(state: state)
        context.refresh(from: device)

        let authenticator: any Authenticator =
            if let source { try global.authenticator(source: source) } else { NoPromptAuthenticator() }
        self.accessGroup = accessGroup ?? Self.defaultGroup
        let groups =
            self.accessGroup == Self.defaultGroup ? [Self.defaultGroup] : [self.accessGroup, Self.defaultGroup]
        keychain = Keychain(
            store: store, accessGroups: groups,
            authenticator: authenticator, device: device,
            auditor: Auditor(
                sink: JSONLinesAuditSink(path: auditPath), isRequired: true, processID: ProcessIdentity.processID,
                userID: ProcessIdentity.userID))
    }

    /// Keeps what this invocation proved and failed for the next ones.
    func finish() {
        let state = context.state
        attempts.save(state.attempts)
        let fresh = state.proofs.all.filter { proof in
            // Only proofs made by this invocation are new; loaded ones keep their time.
            !(runtime?.proofs().contains(proof) ?? false)
        }
        try? runtime?.save(fresh)
    }

    /// Organisation policy files arrive in a later version: an empty or missing directory
    /// means no rules; any file in it is refused rather than ignored (fail closed).
    static func checkPolicies(_ directory: String?) throws(KeygateError) {
        guard let directory else { return }
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        if let first = files.filter({ !$0.hasPrefix(".") }).sorted().first {
            throw KeygateError(
                .unimplemented,
                "\(directory)/\(first): organisation policy files are not supported by this version of keygate; "
                    + "refusing to run without them")
        }
    }
}

/// Stands in for PAM when no passphrase can be asked for: every proof is refused as "not
/// interactive", so a read that needs one fails with status 7 instead of hanging.
struct NoPromptAuthenticator: Authenticator {
    func authenticate(_ requirement: Requirement, prompt: String, context: AuthenticationContext) async
        -> AuthenticationOutcome
    {
        .unavailable("no terminal to ask on and no --passphrase-fd")
    }
}
