import Keygate
import KeygatePolicy
import KeygateStore

/// `keygate get`: writes an item's value to standard output.
struct GetCommand: Command {
    static let prompt = OptionSpec("prompt", .text("TEXT"), help: "why the user is asked")

    static let configuration = CommandConfiguration(
        name: "get", summary: "write an item's value to standard output",
        discussion: """
            usage: keygate get --service S --account A [--access-group G] [--prompt TEXT]

            Writes the item's value to standard output, byte for byte, after the access control
            allows it (asking for a proof through PAM when needed); a newline is added only when
            standard output is a terminal. Exit 3 when there is no such item, 5 when authentication
            failed, 6 when cancelled, 7 when locked or not allowed to ask.
            """,
        options: ItemOptions.options + [prompt], loadsPolicies: true, choosesMode: true)

    /// The item to read.
    let item: ItemOptions
    /// Why the user is asked, when a proof is needed.
    let prompt: String?

    init(parsing arguments: ParsedArguments) {
        item = ItemOptions(arguments)
        prompt = arguments.value(Self.prompt)
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        try await context.withSession(accessGroup: item.accessGroup) { session throws(KeygateError) in
            var query = item.query(in: session)
            query.returnData = true
            query.operationPrompt = prompt
            guard let value = try await session.copyMatching(query).first?.data
            else {
                throw KeygateError(.itemNotFound, "no such item")
            }
            // Straight from the wiped buffer to the descriptor: the value is never copied.
            let output = context.environment.output
            try value.withUnsafeBytes { bytes throws(KeygateError) in try output.write(bytes) }
            // A terminal gets the line ended, as a shell prompt expects; a pipe gets the exact bytes.
            if output.isTerminal {
                try output.write([UInt8(ascii: "\n")])
            }
        }
        return .success
    }
}
