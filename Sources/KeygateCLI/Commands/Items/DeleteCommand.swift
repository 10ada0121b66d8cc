import Keygate
import KeygatePolicy

/// `keygate delete`: deletes an item (no proof needed).
struct DeleteCommand: ItemCommand {
    static let configuration = CommandConfiguration(
        name: "delete", summary: "delete an item",
        discussion: """
            usage: keygate delete --service S --account A [--access-group G]

            Deletes the item. No proof is needed (Apple's odel(true)). Exit 3 when there is none.
            """,
        options: ItemOptions.options, loadsPolicies: true, choosesMode: true)

    /// The item to delete.
    let item: ItemOptions

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        try await context.withSession(accessGroup: item.accessGroup) { session throws(KeygateError) in
            try await session.delete(item.query(in: session))
        }
        return .success
    }
}
