import KeygateLinux
import KeygatePAM
import KeygatePolicy

/// `--pam-service`, `--pam-biometry-service`, `--passphrase-fd` and `--no-interaction`: how a
/// proof of presence is asked for.
struct PAMOptions: Sendable {
    static let passcodeService = OptionSpec(
        "pam-service", .text("NAME"),
        help: "PAM service for the passcode factor (default: keygate; must start with keygate)")
    static let biometryService = OptionSpec(
        "pam-biometry-service", .text("NAME"),
        help: "PAM service for the biometry factor (default: keygate-biometry; must start with keygate)")
    static let passphraseDescriptor = OptionSpec(
        "passphrase-fd", .descriptor, help: "read the passphrase from this file descriptor")
    static let noInteraction = OptionSpec(
        "no-interaction", .flag, help: "never prompt; fail with status 7 instead")
    static let options = [passcodeService, biometryService, passphraseDescriptor, noInteraction]

    /// The PAM service for the passcode factor.
    var passcodeService = "keygate"
    /// The PAM service for the biometry factor.
    var biometryService = "keygate-biometry"
    /// Where passphrases are read from instead of the terminal.
    var passphraseDescriptor: Int32?
    /// Never prompt.
    var noInteraction = false
    /// The askpass program for prompts when there is no terminal: `KEYGATE_ASKPASS`, else
    /// `SSH_ASKPASS` when a display is there (`DISPLAY` or `WAYLAND_DISPLAY`), as the library's
    /// `Keychain.standard(application:)` does; nil when none is named.
    var askpass: String?

    /// What every PAM service keygate may use is named with.
    static let servicePrefix = "keygate"

    /// Reads the group's options.
    /// - Throws: a usage error for a service not named `keygate…` or a descriptor that is no number.
    init(_ arguments: ParsedArguments, variables: EnvironmentVariables) throws(UsageError) {
        var named: [String: String] = [:]
        for name in AskpassPassphraseSource.variables { named[name] = variables[name] }
        askpass = AskpassPassphraseSource.program(in: named)
        if let service = arguments.value(Self.passcodeService) {
            passcodeService = try Self.service(service, option: Self.passcodeService)
        }
        if let service = arguments.value(Self.biometryService) {
            biometryService = try Self.service(service, option: Self.biometryService)
        }
        passphraseDescriptor = try arguments.descriptor(Self.passphraseDescriptor)
        noInteraction = arguments.flag(Self.noInteraction)
    }

    /// A PAM service name given on the command line, checked before any PAM call: it must
    /// start with `keygate` and go on with lowercase letters, digits, `-`, `_` or `.` only
    /// (`keygate`, `keygate-biometry`, `keygate-work`). So a caller, root included, can never
    /// pick another service (one with `pam_rootok` or `pam_permit`) to prove presence.
    static func service(_ value: String, option: OptionSpec) throws(UsageError) -> String {
        let rest = value.utf8.dropFirst(servicePrefix.utf8.count)
        guard value.hasPrefix(servicePrefix),
            rest.allSatisfy({ byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
            })
        else {
            throw UsageError(
                "\(option.spelling) '\(value)' is not allowed: only PAM services named keygate… "
                    + "(lowercase letters, digits, '-', '_', '.') can be used")
        }
        return value
    }

    /// Where passphrases come from: the descriptor when given (it answers every PAM service),
    /// else the terminal, else the askpass program the environment names (`KEYGATE_ASKPASS`, or
    /// `SSH_ASKPASS` with a display: ``askpass``); nil with --no-interaction or when none can be
    /// used, so a proof must not be attempted.
    func passphraseSource() -> (any PassphraseSource)? {
        if noInteraction { return nil }
        if let passphraseDescriptor { return FileDescriptorPassphraseSource(descriptor: passphraseDescriptor) }
        if let terminal = TerminalPassphraseSource.open() { return terminal }
        return askpass.map { AskpassPassphraseSource(program: $0) }
    }

    /// The services, for the owner of this process, whose failures are also counted in `ledger`.
    func configuration(ledger: FileAttemptLedger?) -> PAMAuthenticator.Configuration {
        .init(passcodeService: passcodeService, biometryService: biometryService, ledger: ledger)
    }

    /// Why `factor` cannot be proved through PAM here, when its service file is missing: the
    /// service, where libpam looks, and how to install it.
    func missingService(for factor: Factor) -> KeygateError? {
        let configuration = configuration(ledger: nil)
        guard let service = configuration.service(for: factor), configuration.serviceFile(for: factor) == nil
        else { return nil }
        let places = configuration.serviceDirectories.joined(separator: ", ")
        return KeygateError(
            .notAvailable,
            "PAM service \(service) is not installed (no file in \(places)): install it with "
                + "'sudo install -m 0644 Policies/pam.d/\(service) /etc/pam.d/' from the source tree "
                + "(see Policies/pam.d/README.md)")
    }

    /// A PAM authenticator for the owner of this process with the configured services; its
    /// failures are also counted in the user's shared `ledger`.
    func authenticator(source: any PassphraseSource, ledger: FileAttemptLedger) throws(KeygateError)
        -> PAMAuthenticator
    {
        try PAMAuthenticator(configuration: configuration(ledger: ledger), source: source)
    }
}
