import KeygateLinux
import KeygatePolicy

/// `keygate lock`: forget this session's proof records, like `sudo -k`.
struct LockCommand: Command {
    static let configuration = CommandConfiguration(
        name: "lock", summary: "forget this session's proofs of presence",
        discussion: """
            usage: keygate lock

            Forgets the proofs of presence this login session recorded for reuse, so the next
            command that needs one asks again. Through the daemon, asks keygated to forget them.
            """,
        choosesMode: true)

    init(parsing arguments: ParsedArguments) {}

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        if case .daemon = context.global.mode {
            try await DaemonWiring.lock(context.global)
            context.console.err("keygate: keygated forgot this session's proofs")
            return .success
        }
        do {
            try LinuxWiring.proofRecords(context.console)?.forget()
        } catch {
            throw KeygateError(.io, "\(error)")
        }
        context.console.err("keygate: forgot this session's proofs")
        return .success
    }
}
