import KeygateAudit
import KeygateItems
import KeygatePolicy

/// `keygate key list`: keys' attributes, one JSON object a line.
struct KeyListCommand: Command {
    static let configuration = KeyCommand.subcommand(
        "list", summary: "list keys", options: [KeyOptions.labelFilter, ItemOptions.accessGroup])

    let label: String?
    let accessGroup: String?

    init(parsing arguments: ParsedArguments) {
        label = arguments.value(KeyOptions.labelFilter)
        accessGroup = arguments.value(ItemOptions.accessGroup)
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        try await context.withSession(accessGroup: accessGroup) { session throws(KeygateError) in
            for key in try await session.keys(KeyOptions.query(label: label, in: session)) {
                context.console.out(KeyJSON.line(key))
            }
        }
        return .success
    }
}

/// The JSON line `keygate key list` prints for a key: never its private half.
enum KeyJSON {
    /// `{"label": …, "type": …, "applicationLabel": …, "accessGroup": …, "accessible": …,
    /// "accessControl": …, "text": …, "keeper": …, "imported": …, "created": …}`, every
    /// non-ASCII character escaped (as `keygate list` writes names).
    static func line(_ key: KeyFields) -> String {
        var bytes: [UInt8] = []
        func literal(_ text: String) { bytes.append(contentsOf: text.utf8) }
        func quoted(_ text: String) {
            literal("\"")
            bytes.appendJSONEscaped(text, asciiOnly: true)
            literal("\"")
        }
        literal(#"{"label": "#)
        if let label = key.label { quoted(label) } else { literal("null") }
        literal(#", "type": "#)
        quoted(key.type.rawValue)
        literal(#", "applicationLabel": "#)
        quoted(key.applicationLabelHex)
        literal(#", "accessGroup": "#)
        quoted(key.accessGroup)
        literal(#", "accessible": "#)
        quoted(key.accessControl.protection.name)
        literal(#", "accessControl": "#)
        if key.accessControl.flags.isEmpty { literal("null") } else { quoted(key.accessControl.flags.description) }
        literal(#", "text": "#)
        quoted(key.accessControl.textForm)
        literal(#", "keeper": "#)
        quoted(key.tokenID)
        literal(#", "imported": "#)
        literal(key.imported ? "true" : "false")
        literal(#", "created": "#)
        bytes.appendDecimal(key.created.nanoseconds / 1_000_000_000)
        literal("}")
        return String(decoding: bytes, as: UTF8.self)
    }
}
