import KeygateItems
import KeygatePolicy

/// `keygate key delete`: deletes a key (no proof needed, Apple's `odel(true)`).
struct KeyDeleteCommand: Command {
    static let configuration = KeyCommand.subcommand(
        "delete", summary: "delete a key", options: [KeyOptions.label, ItemOptions.accessGroup])

    let label: String
    let accessGroup: String?

    init(parsing arguments: ParsedArguments) {
        label = arguments.required(KeyOptions.label)
        accessGroup = arguments.value(ItemOptions.accessGroup)
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        try await context.withSession(accessGroup: accessGroup) { session throws(KeygateError) in
            let key = try await session.key(labelled: label)
            try await session.keychain.deleteKeys(
                KeyQuery(applicationLabel: key.applicationLabel, accessGroup: session.accessGroup))
        }
        return .success
    }
}
