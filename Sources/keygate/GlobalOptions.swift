import FoundationEssentials
import Glibc
import KeygateLinux
import KeygatePAM
import KeygatePolicy
import KeygateStore

/// The global options, read before the command name.
struct GlobalOptions: Sendable {
    var store: String?
    var policies: String?
    var audit: String?
    var pamService = "keygate"
    var pamBiometryService = "keygate-biometry"
    var passphraseDescriptor: Int32?
    var noInteraction = false
    var deviceState = LinuxDevice.Mode.logind
    var reuseSeconds = 0
    /// The organisation policies in force, loaded before an item command runs.
    var policySet = PolicySet.empty

    init(_ arguments: Arguments) throws(Arguments.UsageError) {
        store = arguments.values["store"]
        policies = arguments.values["policies"]
        audit = arguments.values["audit"]
        if let service = arguments.values["pam-service"] {
            pamService = try Arguments.pamService(service, option: "pam-service")
        }
        if let service = arguments.values["pam-biometry-service"] {
            pamBiometryService = try Arguments.pamService(service, option: "pam-biometry-service")
        }
        if let text = arguments.values["passphrase-fd"] {
            guard let descriptor = Int32(text), descriptor >= 0 else {
                throw Arguments.UsageError(message: "--passphrase-fd needs a file descriptor number, not '\(text)'")
            }
            passphraseDescriptor = descriptor
        }
        noInteraction = arguments.flags.contains("no-interaction")
        let state = arguments.values["device-state"] ?? ProcessEnvironment.value("KEYGATE_DEVICE_STATE")
        if let state {
            guard let mode = LinuxDevice.Mode(rawValue: state) else {
                throw Arguments.UsageError(
                    message: "unknown device state '\(state)' (expected logind, unlocked or locked)")
            }
            deviceState = mode
        }
        // Relative paths are taken from the current directory, never from the filesystem root.
        store = store.map(Self.absolute)
        audit = audit.map(Self.absolute)
        policies = policies.map(Self.absolute)
        let reuse = arguments.values["reuse-seconds"] ?? ProcessEnvironment.value("KEYGATE_REUSE_SECONDS")
        if let reuse {
            guard let seconds = Int(reuse), seconds >= 0 else {
                throw Arguments.UsageError(message: "--reuse-seconds needs a whole number of seconds, not '\(reuse)'")
            }
            reuseSeconds = min(seconds, AuthenticationState.maximumReuseSeconds)
        }
    }

    /// Where passphrases come from: the descriptor when given (it answers every PAM service),
    /// else the terminal; nil with --no-interaction or when neither can be used, so a proof
    /// must not be attempted.
    func passphraseSource() -> (any PassphraseSource)? {
        if noInteraction { return nil }
        if let passphraseDescriptor { return FileDescriptorPassphraseSource(descriptor: passphraseDescriptor) }
        return TerminalPassphraseSource.open()
    }

    /// A PAM authenticator for the owner of this process with the configured services; its
    /// failures are also counted in the user's shared ledger.
    func authenticator(source: any PassphraseSource) throws(KeygateError) -> PAMAuthenticator {
        try PAMAuthenticator(
            configuration: .init(
                passcodeService: pamService, biometryService: pamBiometryService,
                ledger: FileAttemptLedger(directory: try ledgerDirectory())),
            source: source)
    }

    /// The database: `--store`, else `$XDG_DATA_HOME/keygate/items.db`.
    func storePath() throws(KeygateError) -> String {
        if let store { return store }
        return try SQLiteItemStore.defaultPath()
    }

    /// The audit trail: `--audit`, else `audit.jsonl` beside the store.
    func auditPath() throws(KeygateError) -> String {
        if let audit { return audit }
        return StandardPaths.directory(of: try storePath()) + "/audit.jsonl"
    }

    /// Where the user's failure counters live: the default data directory (the same for every
    /// store), else beside the store.
    func ledgerDirectory() throws(KeygateError) -> String {
        let directory: String
        if let defaultDirectory = try? SQLiteItemStore.defaultDirectory() {
            directory = defaultDirectory
        } else {
            directory = StandardPaths.directory(of: try storePath())
        }
        try? FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return directory
    }

    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }
}
