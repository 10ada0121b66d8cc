import KeygatePAM
import KeygatePolicy

/// `keygate prove`: one proof of presence through PAM, to check a PAM set-up.
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

            Proves presence for the owner of this process through PAM, once, and prints which factor
            was proved and how long PAM took. Exit 0 when proved; 5 when authentication failed or the
            factor is locked out; 6 when cancelled; 7 when there is no terminal to ask on (and no
            --passphrase-fd); 1 when the PAM service is unavailable.
            """,
        options: [factor, prompt])

    /// The factors to prove.
    let requirement: Requirement
    /// The reason shown.
    let prompt: String

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        requirement =
            switch try arguments.choice(Self.factor) {
            case "biometry": Requirement([.biometry])
            case "presence": Requirement([.biometry, .passcode])
            default: Requirement([.passcode])
            }
        prompt = arguments.value(Self.prompt) ?? "Prove that you are present"
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        guard let source = context.global.pam.passphraseSource() else {
            throw KeygateError(.interactionNotAllowed, "no terminal to ask on and no --passphrase-fd; not prompting")
        }
        let authenticator = try context.global.pam.authenticator(
            source: source, ledger: try context.global.store.paths().ledger(reportingTo: context.console))
        let clock = ContinuousClock()
        let authentication = AuthenticationContext()
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
