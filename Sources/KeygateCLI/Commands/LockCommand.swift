import KeygateLinux
import KeygatePolicy

/// `keygate lock`: forget this session's proof records, like `sudo -k`.
struct LockCommand: Command {
    static let configuration = CommandConfiguration(
        name: "lock", summary: "forget this session's proofs of presence",
        discussion: """
            usage: keygate lock

            Forgets the proofs of presence this login session recorded for reuse, so the next
            command that needs one asks again.
            """)

    init(parsing arguments: ParsedArguments) {}

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        do {
            try LinuxWiring.proofRecords(context.console)?.forget()
        } catch {
            throw KeygateError(.io, "\(error)")
        }
        context.console.err("keygate: forgot this session's proofs")
        return .success
    }
}
