/// `keygate policy check|explain|test`: organisation policies in CI and at a desk.
enum PolicyCommand: CommandGroup {
    static let configuration = CommandConfiguration(
        name: "policy", summary: "check, explain or test organisation policies",
        discussion: """
            usage: keygate policy check [PATH…]
                   keygate policy explain --service S --account A --operation OP [--program P]
                                          [--access-group G] [--label L] [--access-control FLAGS]
                                          [--accessible CLASS] [--context FILE.json]
                   keygate policy test FILE.json…

            check    parses, validates and lints the policies of each PATH (default: the global
                     --policies, else /etc/keygate/policies and $XDG_CONFIG_HOME/keygate/policies);
                     warnings go to standard error; exit 0 when usable, 2 naming file:line:column.
            explain  prints, as one JSON object, which rules match the situation, which decided,
                     and the combined requirement (with --context, the item's own access control is
                     evaluated too, under the rules' freshness bound). OP is add, read, update,
                     delete, export, import or list. Exit 0 for any decision.
            test     runs policy test files (cases with expected decisions and deciding rules);
                     exit 0 when every case passes, 1 when one fails, 2 for a broken file.
            """,
        options: PolicyExplainCommand.options, maximumPositionals: nil)

    static var subcommands: [any Command.Type] {
        [
            PolicyCheckCommand.self, PolicyExplainCommand.self, PolicyTestCommand.self,
        ]
    }

    static let missingSubcommand = UsageError("missing policy command")

    static func unknownSubcommand(_ word: String) -> UsageError { UsageError("unknown policy command '\(word)'") }
}
