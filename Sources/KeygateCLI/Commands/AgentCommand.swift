import KeygateClient
import KeygateItems
import KeygatePAM
import KeygatePolicy
import KeygateProtocol

/// `keygate agent`: this login session's authentication agent for `keygated`.
struct AgentCommand: Command {
    static let configuration = CommandConfiguration(
        name: "agent", summary: "answer keygated's questions for this session's requests",
        discussion: """
            usage: keygate --daemon agent [--passphrase-fd N]

            Registers with keygated as the authentication agent of this login session (of this
            user's requests outside any session, when run outside one) and answers the PAM
            questions of the session's requests that cannot ask themselves: a command without a
            terminal, the SSH agent, the Secret Service. Each question is shown with what
            keygated knows of it: the operation and item, and the requesting program and pid.
            Answers come from the terminal (hidden), from --passphrase-fd N (one line a
            question), or from KEYGATE_ASKPASS. Runs in the foreground until killed; prints
            'keygate agent: ready' on standard error once registered. One agent per session.
            """,
        options: [PAMOptions.passphraseDescriptor], choosesMode: true)

    /// `--passphrase-fd` given after the command (before it, it is the global option).
    let passphraseDescriptor: Int32?

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        passphraseDescriptor = try arguments.descriptor(PAMOptions.passphraseDescriptor)
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        guard case .daemon(let socket) = context.global.mode else {
            throw KeygateError(
                .param, "an authentication agent answers keygated's questions: run it with --daemon (or KEYGATE_SOCKET)"
            )
        }
        let source: (any PassphraseSource)? =
            passphraseDescriptor.map { FileDescriptorPassphraseSource(descriptor: $0) }
            ?? context.global.pam.passphraseSource()
        guard let source else {
            throw KeygateError(
                .interactionNotAllowed,
                "the agent has no one to ask: run it on a terminal, or give --passphrase-fd N or KEYGATE_ASKPASS")
        }
        let agent = try AgentConnection(socketPath: socket)
        context.console.err("keygate agent: ready")
        while let asked = try agent.next() {
            let prompt = asked.prompt
            switch prompt.style {
            case .echoOff, .echoOn:
                let answer = RequesterPrompt.ask(
                    source,
                    header: RequesterPrompt.header(
                        "keygate agent", program: prompt.program, pid: prompt.pid, purpose: prompt.purpose),
                    text: prompt.text, echo: prompt.style == .echoOn, service: "keygated", factor: .passcode,
                    purpose: prompt.purpose, console: context.console)
                try agent.answer(asked.id, with: answer.map { $0.withUnsafeBytes { SecretData(bytes: $0) } })
            case .errorMessage, .textInfo:
                source.show(
                    PAMMessage(kind: prompt.style == .textInfo ? .info : .error, text: prompt.text, service: "keygated")
                )
            }
        }
        context.console.err("keygate agent: keygated closed the connection")
        return .failure
    }
}
