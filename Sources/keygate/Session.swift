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
    let storePath: String
    let auditPath: String
    /// The access group the CLI uses: `keygate`, or the one an option names.
    let accessGroup: String
    private let loadedProofs: [Proof]

    static let defaultGroup = "keygate"

    init(_ global: GlobalOptions, accessGroup: String? = nil) throws(KeygateError) {
        storePath = try global.storePath()
        auditPath = try global.auditPath()
        try Self.checkPolicies(global.policies)
        let store = try SQLiteItemStore(path: storePath)
        runtime = RuntimeRecords.open()
        let device = try LinuxDevice(mode: global.deviceState, runtime: runtime)

        var state = AuthenticationState(reuseSeconds: global.reuseSeconds)
        loadedProofs = global.reuseSeconds > 0 ? runtime?.proofs() ?? [] : []
        for proof in loadedProofs { state.proofs.record(proof) }
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
            store: store, accessGroups: groups, authenticator: authenticator, device: device,
            auditor: Auditor(
                sink: JSONLinesAuditSink(path: auditPath, anchors: store), isRequired: true,
                processID: ProcessIdentity.processID,
                userID: ProcessIdentity.userID))
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

    /// Organisation policy files arrive in a later version: an empty or missing directory
    /// means no rules. Anything else is refused rather than ignored (fail closed): a policy
    /// file, a path that is not a directory, a directory that cannot be read.
    static func checkPolicies(_ directory: String?) throws(KeygateError) {
        guard let directory else { return }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else { return }
        guard isDirectory.boolValue else {
            throw KeygateError(.param, "--policies \(directory) is not a directory")
        }
        guard let files = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            throw KeygateError(.io, "cannot read the policy directory \(directory)")
        }
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
