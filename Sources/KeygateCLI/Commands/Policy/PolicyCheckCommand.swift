import Keygate
import KeygatePolicy

/// `keygate policy check [PATH…]`: parses, validates and lints organisation policies.
struct PolicyCheckCommand: Command {
    static let configuration = PolicyCommand.subcommand(
        "check", summary: "check organisation policies", maximumPositionals: nil)

    /// The paths named, absolute (none: the policies in force).
    let paths: [String]

    init(parsing arguments: ParsedArguments) {
        paths = arguments.positionals.map(ParsedArguments.absolute)
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        let paths = paths.isEmpty ? context.global.store.policyPaths(context.environment.variables) : paths
        let set: PolicySet
        do throws(KeygateError) {
            set = try PolicyDirectory.load(paths)
        } catch {
            return context.console.refuse(error)
        }
        for warning in PolicyDirectory.warnings(set) { context.console.err("keygate: warning: \(warning)") }
        let rules = set.ruleCount
        let grants = set.document.grants.count
        context.console.out(
            "ok: \(rules) rule\(rules == 1 ? "" : "s"), \(grants) grant\(grants == 1 ? "" : "s") in "
                + paths.joined(separator: ", "))
        return .success
    }
}
