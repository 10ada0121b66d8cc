import KeygatePolicy

/// The global options, read before the command name: four groups, each declaring its options
/// once, and `--version`.
struct GlobalOptions: Sendable {
    /// `--daemon`, `--embedded` and `KEYGATE_SOCKET`.
    var modeOptions: ModeOptions
    /// Where the command runs: ``Mode/embedded`` for a command that does not choose
    /// (``CommandConfiguration/choosesMode``).
    var mode: Mode
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
    static let options =
        ModeOptions.options + StoreOptions.options + PAMOptions.options + DeviceOptions.options + [version]

    /// The options that only steer the embedded store, refused in daemon mode (the daemon keeps
    /// the store, its trail, its policies, its PAM services and its own view of the device).
    static let embeddedOnly =
        StoreOptions.options + [
            PAMOptions.passcodeService, PAMOptions.biometryService, DeviceOptions.state,
        ]

    /// Reads the groups; `variables` give `KEYGATE_SOCKET` and the defaults of
    /// `--device-state` (embedded mode only) and `--reuse-seconds`. When `choosesMode`, the mode
    /// is worked out here (``ModeOptions/resolve()``).
    /// - Throws: a usage error for a bad value, both mode flags, or an embedded-only option in
    ///   daemon mode (naming it).
    init(_ arguments: ParsedArguments, variables: EnvironmentVariables, choosesMode: Bool = false)
        throws(UsageError)
    {
        modeOptions = try ModeOptions(arguments, variables: variables)
        mode = choosesMode ? modeOptions.resolve() : .embedded
        if case .daemon = mode, let option = Self.embeddedOnly.first(where: arguments.isGiven) {
            throw UsageError(
                "\(option.spelling) only applies to the embedded store; keygated keeps its own (use --embedded)")
        }
        store = StoreOptions(arguments)
        pam = try PAMOptions(arguments, variables: variables)
        device = try DeviceOptions(arguments, variables: variables, readsDeviceState: mode == .embedded)
    }
}
