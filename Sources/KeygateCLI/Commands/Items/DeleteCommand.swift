import Keygate
import KeygatePolicy

/// `keygate delete`: deletes an item (no proof needed).
struct DeleteCommand: Command {
    static let configuration = CommandConfiguration(
        name: "delete", summary: "delete an item",
        discussion: """
            usage: keygate delete --service S --account A [--access-group G]

            Deletes the item. No proof is needed (Apple's odel(true)). Exit 3 when there is none.
            """,
        options: ItemOptions.options, loadsPolicies: true)

    /// The item to delete.
    let item: ItemOptions

    init(parsing arguments: ParsedArguments) {
        item = ItemOptions(arguments)
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        let session = try context.session(accessGroup: item.accessGroup)
        defer { session.finish() }
        try await session.keychain.delete(item.query(in: session), context: session.context)
        return .success
    }
}
