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

    /// What every PAM service keygate may use is named with.
    static let servicePrefix = "keygate"

    /// Reads the group's options.
    /// - Throws: a usage error for a service not named `keygate…` or a descriptor that is no number.
    init(_ arguments: ParsedArguments) throws(UsageError) {
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
    /// else the terminal; nil with --no-interaction or when neither can be used, so a proof
    /// must not be attempted.
    func passphraseSource() -> (any PassphraseSource)? {
        if noInteraction { return nil }
        if let passphraseDescriptor { return FileDescriptorPassphraseSource(descriptor: passphraseDescriptor) }
        return TerminalPassphraseSource.open()
    }

    /// A PAM authenticator for the owner of this process with the configured services; its
    /// failures are also counted in the user's shared `ledger`.
    func authenticator(source: any PassphraseSource, ledger: FileAttemptLedger) throws(KeygateError)
        -> PAMAuthenticator
    {
        try PAMAuthenticator(
            configuration: .init(passcodeService: passcodeService, biometryService: biometryService, ledger: ledger),
            source: source)
    }
}
