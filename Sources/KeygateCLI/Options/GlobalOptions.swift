import KeygatePolicy

/// The global options, read before the command name: three groups, each declaring its options
/// once, and `--version`.
struct GlobalOptions: Sendable {
    /// `--store`, `--policies`, `--audit`.
    var store: StoreOptions
    /// `--pam-service`, `--pam-biometry-service`, `--passphrase-fd`, `--no-interaction`.
    var pam: PAMOptions
    /// `--device-state`, `--reuse-seconds`.
    var device: DeviceOptions
    /// The organisation policies in force, loaded before a command that opens the store runs.
    var policySet = PolicySet.empty

    /// `-V, --version`.
    static let version = OptionSpec("version", short: "V", .flag, help: "print keygate's version and exit")

    /// Every global option, in the order help lists them.
    static let options = StoreOptions.options + PAMOptions.options + DeviceOptions.options + [version]

    /// Reads the groups; `variables` give the defaults of `--device-state` and `--reuse-seconds`.
    init(_ arguments: ParsedArguments, variables: EnvironmentVariables) throws(UsageError) {
        store = StoreOptions(arguments)
        pam = try PAMOptions(arguments)
        device = try DeviceOptions(arguments, variables: variables)
    }
}
