import Keygate
import KeygatePolicy
import KeygateStore

/// `keygate add`: adds an item whose value is read from standard input (or asked twice on a
/// terminal).
struct AddCommand: Command {
    static let label = OptionSpec("label", .text("L"), help: "a label")

    static let configuration = CommandConfiguration(
        name: "add", summary: "add an item; its value is read from standard input",
        discussion: """
            usage: keygate add --service S --account A [--access-group G] [--label L]
                               [--accessible CLASS] [--access-control FLAGS]

            Adds an item whose value is read from standard input, byte for byte; from a terminal it
            is asked twice with echo off (the line typed, without its newline). CLASS is Apple's
            name without the prefix (whenUnlockedThisDeviceOnly); FLAGS is a comma-separated list of
            Apple's flag names (biometryAny,devicePasscode,or). Exit 4 when the item exists.
            """,
        options: ItemOptions.options + [label] + ProtectionOptions.options, loadsPolicies: true, choosesMode: true)

    /// The item to add.
    let item: ItemOptions
    /// Its label.
    let label: String?
    /// Its protection, as typed.
    let protection: ProtectionOptions

    init(parsing arguments: ParsedArguments) {
        item = ItemOptions(arguments)
        label = arguments.value(Self.label)
        protection = ProtectionOptions(arguments)
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        try await context.withSession(accessGroup: item.accessGroup) { session throws(KeygateError) in
            let protection = try protection.itemProtection()
            let value = try ItemValue.read(for: item, context)
            try await session.add(
                AddRequest(
                    service: item.service, account: item.account, label: label, protection: protection, data: value))
        }
        return .success
    }
}
