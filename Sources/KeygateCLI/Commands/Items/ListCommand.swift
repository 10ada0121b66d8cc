import Keygate
import KeygatePolicy

/// `keygate list`: items' attributes, one JSON object a line, never their values.
struct ListCommand: Command {
    static let configuration = CommandConfiguration(
        name: "list", summary: "list items' attributes, one JSON object a line (never values)",
        discussion: """
            usage: keygate list [--service S] [--account A] [--access-group G]

            Prints one JSON object a line per item: its attributes, never its value. Never asks
            for a proof. Non-ASCII characters are written as \\uXXXX escapes, so names that differ
            only in their bytes (NFC and NFD forms) are told apart.
            """,
        options: ItemFilterOptions.options, loadsPolicies: true, choosesMode: true)

    /// Which items to list.
    let filter: ItemFilterOptions

    /// About how many bytes of lines go out in one write.
    static let chunkSize = 65_536

    init(parsing arguments: ParsedArguments) {
        filter = ItemFilterOptions(arguments)
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        try await context.withSession(accessGroup: filter.accessGroup) { session throws(KeygateError) in
            var query = ItemQuery(
                service: filter.service, account: filter.account, accessGroup: session.accessGroup,
                synchronizable: .any,
                returnAttributes: true)
            query.matchLimit = .all
            // Lines are laid out as bytes and go out about 64 KiB at a time, not one write(2)
            // per item; output is best effort, like every message (a closed pipe ends it).
            var writer = ItemJSONWriter(asciiOnly: true, capacity: Self.chunkSize + 4096)
            var writable = true
            func flush() {
                if writable, !writer.bytes.isEmpty {
                    do throws(KeygateError) {
                        try context.console.output.write(writer.bytes)
                    } catch {
                        writable = false
                    }
                }
                writer.removeAll()
            }
            for item in try await session.matches(query) {
                guard let attributes = item.attributes else { continue }
                writer.append(attributes, newline: true)
                if writer.bytes.count >= Self.chunkSize { flush() }
            }
            flush()
        }
        return .success
    }
}

extension Session {
    /// The items `query` matches; none is an empty list, not an error.
    func matches(_ query: ItemQuery) async throws(KeygateError) -> [MatchedItem] {
        do {
            return try await copyMatching(query)
        } catch  where error.status == .itemNotFound {
            return []
        }
    }
}
