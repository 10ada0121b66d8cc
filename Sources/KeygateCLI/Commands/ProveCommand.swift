import KeygateLinux
import KeygatePAM
import KeygatePolicy

/// `keygate prove`: one proof of presence through PAM, to check a PAM set-up. It asks exactly
/// what a read of an item with the matching access control would ask (`devicePasscode`,
/// `biometryAny`, `userPresence`), decided by the evaluator against the same device: so
/// `--factor presence` goes straight to the passcode when biometry cannot be used, as a read does.
struct ProveCommand: Command {
    static let factor = OptionSpec(
        "factor", .choice("FACTOR", ["passcode", "biometry", "presence"]),
        help: "passcode (default), biometry, or presence (biometry, else passcode)")
    static let prompt = OptionSpec("prompt", .text("TEXT"), help: "the reason shown to the user")

    static let configuration = CommandConfiguration(
        name: "prove", summary: "prove presence through PAM now (checks your PAM set-up)",
        discussion: """
            usage: keygate [--pam-service NAME] [--pam-biometry-service NAME] [--passphrase-fd N] prove
                           [--factor passcode|biometry|presence] [--prompt TEXT]

            Proves presence for the owner of this process through PAM, once, asking what a read of an
            item with that access control would ask (devicePasscode, biometryAny, userPresence), and
            prints which factor was proved and how long PAM took. Exit 0 when proved; 5 when
            authentication failed or the factor is locked out; 6 when cancelled; 7 when there is no
            terminal, --passphrase-fd or askpass program to ask on; 1 when the PAM service is not
            installed or the factor cannot be used (named first).
            """,
        options: [factor, prompt])

    /// The access control a read would be decided by.
    let flags: AccessControlFlags
    /// The reason shown.
    let prompt: String

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        flags =
            switch try arguments.choice(Self.factor) {
            case "biometry": .biometryAny
            case "presence": .userPresence
            default: .devicePasscode
            }
        prompt = arguments.value(Self.prompt) ?? "Prove that you are present"
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        let global = context.global
        let ledger = try global.store.paths().ledger(reportingTo: context.console)
        let authentication = AuthenticationContext()
        let environment = LinuxWiring.deviceEnvironment
        let device = LinuxWiring.device(
            mode: global.device.mode, environment: environment,
            askedAhead: LinuxDevice.askLockState(mode: global.device.mode, environment: environment), records: nil,
            ledger: ledger, console: context.console)
        authentication.refresh(from: device)
        let control = try AccessControl(protection: .afterFirstUnlock, flags: flags)
        let requirement: Requirement
        let decision = Evaluator().evaluate(control, operation: .read, context: authentication)
        switch decision.outcome {
        case .authenticate(let asked):
            requirement = asked
        case .deny(let status):
            let why = decision.reasons.map(\.explanation).joined(separator: "; ")
            throw KeygateError(status, "a read of a \(flags) item would refuse before asking: \(why)")
        case .allow:
            throw KeygateError(.internalError, "a read would need no proof")
        }
        // What is not installed is said first, before anything asks.
        for factor in requirement.alternatives.flatMap(\.factors) {
            if let missing = global.pam.missingService(for: factor) {
                // An alternative whose service is missing is skipped when another can serve.
                if requirement.alternatives.count > 1 && factor == .biometry { continue }
                throw missing
            }
        }
        guard let source = global.pam.passphraseSource() else {
            throw KeygateError(
                .interactionNotAllowed, "no terminal, --passphrase-fd or askpass program to ask on; not prompting")
        }
        let authenticator = try global.pam.authenticator(source: source, ledger: ledger)
        let clock = ContinuousClock()
        var outcome = AuthenticationOutcome.cancelled
        let elapsed = await clock.measure {
            outcome = await authenticator.authenticate(requirement, prompt: prompt, context: authentication)
        }
        guard case .proved(let factors) = outcome else {
            throw KeygateError(outcome.status ?? .authFailed, outcome.description, cause: outcome.cause)
        }
        let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3
        context.console.out("proved \(factors) for \(authenticator.user) in \(Self.format(milliseconds)) ms")
        return .success
    }

    /// `milliseconds` with two decimals.
    static func format(_ milliseconds: Double) -> String {
        let hundredths = Int((milliseconds * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100)." + (fraction < 10 ? "0" : "") + "\(fraction)"
    }
}
