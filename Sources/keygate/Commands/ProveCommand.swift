import KeygatePAM
import KeygatePolicy

/// `keygate prove`: one proof of presence through PAM, to check a PAM set-up.
enum ProveCommand {
    static let options: [Arguments.Option] = [
        .init(
            name: "factor", value: "FACTOR",
            help: "passcode (default), biometry, or presence (biometry, else passcode)"),
        .init(name: "prompt", value: "TEXT", help: "the reason shown to the user"),
    ]

    static let help = """
        usage: keygate [--pam-service NAME] [--pam-biometry-service NAME] [--passphrase-fd N] prove
                       [--factor passcode|biometry|presence] [--prompt TEXT]

        Proves presence for the owner of this process through PAM, once, and prints which factor
        was proved and how long PAM took. Exit 0 when proved; 5 when authentication failed or the
        factor is locked out; 6 when cancelled; 7 when there is no terminal to ask on (and no
        --passphrase-fd); 1 when the PAM service is unavailable.

        \(Arguments.helpLines(options))
        """

    @Sendable static func run(_ global: GlobalOptions, _ words: ArraySlice<String>) async -> ExitStatus {
        let requirement: Requirement
        let prompt: String
        do throws(Arguments.UsageError) {
            let arguments = try Arguments(words, options: options)
            if arguments.wantsHelp {
                Console.out(help)
                return .success
            }
            try arguments.expectNoPositionals()
            switch arguments.values["factor"] ?? "passcode" {
            case "passcode": requirement = Requirement([.passcode])
            case "biometry": requirement = Requirement([.biometry])
            case "presence": requirement = Requirement([.biometry, .passcode])
            case let other: throw Arguments.UsageError(message: "unknown factor '\(other)'")
            }
            prompt = arguments.values["prompt"] ?? "Prove that you are present"
        } catch {
            return KeygateCommand.fail(usage: error, help: help)
        }
        guard let source = global.passphraseSource() else {
            return KeygateCommand.fail(
                KeygateError(.interactionNotAllowed, "no terminal to ask on and no --passphrase-fd; not prompting"))
        }
        let authenticator: PAMAuthenticator
        do {
            authenticator = try global.authenticator(source: source)
        } catch {
            return KeygateCommand.fail(error)
        }
        let clock = ContinuousClock()
        let context = AuthenticationContext()
        var outcome = AuthenticationOutcome.cancelled
        let elapsed = await clock.measure {
            outcome = await authenticator.authenticate(requirement, prompt: prompt, context: context)
        }
        guard case .proved(let factors) = outcome else {
            return KeygateCommand.fail(KeygateError(outcome.status ?? .authFailed, outcome.description))
        }
        let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3
        Console.out("proved \(factors) for \(authenticator.user) in \(Self.format(milliseconds)) ms")
        return .success
    }

    static func format(_ milliseconds: Double) -> String {
        let hundredths = Int((milliseconds * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100)." + (fraction < 10 ? "0" : "") + "\(fraction)"
    }
}
