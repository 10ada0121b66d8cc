import KeygateItems
import KeygatePolicy

/// `keygate key delete`: deletes a key (no proof needed, Apple's `odel(true)`).
struct KeyDeleteCommand: Command {
    static let configuration = KeyCommand.subcommand(
        "delete", summary: "delete a key", options: [KeyOptions.label, ItemOptions.accessGroup])

    let target: KeyTarget

    init(parsing arguments: ParsedArguments) { target = KeyTarget(arguments) }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        try await target.withKey(context) { (session, key) throws(KeygateError) in
            try await session.keychain.deleteKeys(KeyTarget.query(key, in: session))
        }
        return .success
    }
}
