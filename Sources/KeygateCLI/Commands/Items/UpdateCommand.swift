import Keygate
import KeygatePolicy
import KeygateStore

/// `keygate update`: replaces an item's value with standard input (or a value asked twice).
struct UpdateCommand: ItemCommand {
    static let configuration = CommandConfiguration(
        name: "update", summary: "replace an item's value with standard input",
        discussion: """
            usage: keygate update --service S --account A [--access-group G]

            Replaces the item's value with standard input, byte for byte, or with the line typed
            twice at a hidden prompt when standard input is a terminal (a protected item asks for a
            proof first).
            """,
        options: ItemOptions.options, loadsPolicies: true, choosesMode: true)

    /// The item to change.
    let item: ItemOptions

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        try await context.withSession(accessGroup: item.accessGroup) { session throws(KeygateError) in
            let value = try ItemValue.read(for: item, context)
            try await session.update(
                item.query(in: session), changes: ItemChanges(data: value))
        }
        return .success
    }
}
