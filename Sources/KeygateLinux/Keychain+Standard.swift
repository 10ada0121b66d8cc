public import Keygate
public import KeygatePAM
public import KeygatePolicy
import KeygateStore

extension Keychain {
    /// An application's keychain on Linux, set up in one call.
    ///
    /// - its own store and audit trail in ``KeygateLinux/StandardPaths`` (`$XDG_DATA_HOME/<application>/`),
    ///   the trail required (a decision whose record cannot be written is refused), every
    ///   record naming this process's pid and uid;
    /// - its own access group, `application`, unless `accessGroups` says otherwise;
    /// - the Linux device (``KeygateLinux/LinuxDevice``: logind's lock state, the enrolled fingers) and the
    ///   user's failure ledger shared with every other application and the CLI;
    /// - PAM (`keygate`, `keygate-biometry`) asking on the terminal, else through an askpass
    ///   program (``KeygateLinux/AskpassPassphraseSource``), else nobody: a read that needs a proof then
    ///   fails at once with `errSecInteractionNotAllowed` instead of hanging.
    ///
    /// ```swift
    /// let keychain = try Keychain.standard(application: "com.example.app")
    /// ```
    /// - Parameters:
    ///   - application: names the directories and the default access group (reverse-DNS).
    ///   - accessGroups: the groups the app may use; the first is the default. Default: `[application]`.
    ///   - passphraseSource: where PAM's questions are answered; nil chooses as above.
    ///   - interactive: false never asks anyone (a service, a batch job).
    ///   - deviceMode: where the lock state comes from (``KeygateLinux/LinuxDevice/Mode``).
    ///   - pam: the PAM services and Keygate's failure policy.
    ///   - environment: where the XDG variables, `KEYGATE_ASKPASS` and `SSH_ASKPASS` are read.
    /// - Throws: ``KeygatePolicy/KeygateError`` when the store or its directory cannot be opened safely.
    public static func standard(
        application: String, accessGroups: [String]? = nil, passphraseSource: (any PassphraseSource)? = nil,
        interactive: Bool = true, deviceMode: LinuxDevice.Mode = .logind,
        pam: PAMAuthenticator.Configuration = PAMAuthenticator.Configuration(),
        environment: [String: String] = ProcessEnvironment.current()
    ) throws(KeygateError) -> Keychain {
        let paths = try StandardPaths(application: application, environment: environment)
        let store = try SQLiteItemStore(path: paths.store)
        let ledger = FileAttemptLedger(directory: paths.ledgerDirectory)
        let records = try? ProofRecords.open(directory: paths.runtimeDirectory, environment: environment)
        let device = LinuxDevice(
            mode: deviceMode, proofRecords: records ?? nil, attemptLedger: ledger, environment: environment)
        let source: (any PassphraseSource)? =
            interactive
            ? passphraseSource ?? TerminalPassphraseSource.open(label: application)
                ?? AskpassPassphraseSource.fromEnvironment(environment)
            : nil
        let authenticator: any Authenticator =
            if let source { try PAMAuthenticator(configuration: pam, source: source) } else { NoPromptAuthenticator() }
        return Keychain(
            store: store, accessGroups: accessGroups ?? [application], authenticator: authenticator, device: device,
            attemptLedger: ledger, defaultInteraction: source == nil ? .fail : .allow,
            auditor: Auditor(
                sink: JSONLinesAuditSink(path: paths.auditTrail, anchors: store), isRequired: true,
                executable: CurrentProcess.executable))
    }
}
