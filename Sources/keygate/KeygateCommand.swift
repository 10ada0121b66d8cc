import KeygatePolicy

/// The top of `keygate`: global options, then one command.
enum KeygateCommand {
    static let globalOptions: [Arguments.Option] = [
        .init(name: "store", value: "PATH", help: "the item database (default: $XDG_DATA_HOME/keygate/items.db)"),
        .init(name: "policies", value: "DIR", help: "directory of organisation policy files"),
        .init(name: "audit", value: "PATH", help: "the audit trail (default: next to the store)"),
        .init(
            name: "pam-service", value: "NAME",
            help: "PAM service for the passcode factor (default: keygate; must start with keygate)"),
        .init(
            name: "pam-biometry-service", value: "NAME",
            help: "PAM service for the biometry factor (default: keygate-biometry; must start with keygate)"),
        .init(name: "passphrase-fd", value: "N", help: "read the passphrase from this file descriptor"),
        .init(name: "no-interaction", value: nil, help: "never prompt; fail with status 7 instead"),
        .init(name: "device-state", value: "STATE", help: "logind (default), unlocked or locked"),
        .init(name: "reuse-seconds", value: "SECONDS", help: "reuse a proof for this long across invocations (0–300)"),
        .init(name: "version", short: "V", value: nil, help: "print keygate's version and exit"),
    ]

    /// The commands, by name.
    static let commands:
        [(name: String, summary: String, run: @Sendable (GlobalOptions, ArraySlice<String>) async -> ExitStatus)] = [
            ("add", "add an item; its value is read from standard input", ItemCommands.add),
            ("get", "write an item's value to standard output", ItemCommands.get),
            ("update", "replace an item's value with standard input", ItemCommands.update),
            ("delete", "delete an item", ItemCommands.delete),
            ("list", "list items' attributes, one JSON object a line (never values)", ItemCommands.list),
            ("evaluate", "decide an access control against a context file (dry run)", EvaluateCommand.run),
            ("export", "write an encrypted backup of the items that may migrate", BackupCommands.export),
            ("import", "restore an encrypted backup", BackupCommands.import),
            ("audit", "show, verify or repair the audit trail", AuditCommand.run),
            ("lock", "forget this session's proofs of presence", LockCommand.run),
            ("prove", "prove presence through PAM now (checks your PAM set-up)", ProveCommand.run),
            ("policy", "check, explain or test organisation policies", PolicyCommand.run),
            ("demo", "run Keygate on a temporary store and show each decision", DemoCommand.run),
            ("credential", "git's credential-helper protocol (git-credential-keygate)", GitCredentialCommand.run),
            (
                "docker-credential", "docker's credential-helper protocol (docker-credential-keygate)",
                DockerCredentialCommand.run
            ),
        ]

    static let commandWidth = commands.map(\.name.count).max() ?? 0

    static let usage = """
        usage: keygate [global options] <command> [options] [--] [arguments]

        commands:
        \(commands.map { "  " + $0.name.padding(to: commandWidth) + "  " + $0.summary }.joined(separator: "\n"))

        global options:
        \(Arguments.helpLines(globalOptions + [Arguments.helpOption]))

        Run 'keygate <command> --help' for a command's options, 'man keygate' for the manual.
        """

    /// Runs the command line and returns the exit status.
    static func run(_ words: [String]) async -> ExitStatus {
        let invocation:
            (GlobalOptions, ArraySlice<String>, run: @Sendable (GlobalOptions, ArraySlice<String>) async -> ExitStatus)
        do throws(Arguments.UsageError) {
            let global = try Arguments(words[...], options: globalOptions, stopAtPositional: true)
            if global.flags.contains("version") {
                Console.out("keygate \(KeygateVersion.current)")
                return .success
            }
            guard let name = global.positionals.first else {
                if global.wantsHelp {
                    Console.out(usage)
                    return .success
                }
                throw Arguments.UsageError(message: "missing command")
            }
            if name == "help" {
                Console.out(usage)
                return .success
            }
            guard let command = commands.first(where: { $0.name == name }) else {
                throw Arguments.UsageError(message: "unknown command '\(name)'")
            }
            // `keygate --help get …` shows get's help; it never runs the command.
            let words =
                global.wantsHelp ? ["--help"] + global.positionals.dropFirst() : Array(global.positionals.dropFirst())
            invocation = (
                try GlobalOptions(global), words[...],
                policyBound.contains(name) && !global.wantsHelp ? withPolicies(command.run) : command.run
            )
        } catch {
            return fail(usage: error, help: usage)
        }
        return await invocation.run(invocation.0, invocation.1)
    }

    /// The commands that open the store: organisation policies apply to them.
    static let policyBound: Set<String> = ["add", "get", "update", "delete", "list", "export", "import"]

    /// Runs `command` with the organisation policies loaded; a broken policy file refuses to
    /// run (exit 2, errSecParam, naming file:line:column), never runs without its rules.
    static func withPolicies(
        _ command: @escaping @Sendable (GlobalOptions, ArraySlice<String>) async -> ExitStatus
    ) -> @Sendable (GlobalOptions, ArraySlice<String>) async -> ExitStatus {
        { global, words in
            var global = global
            do throws(KeygateError) {
                global.policySet = try global.loadPolicies()
            } catch {
                Console.err("keygate: \(error.description)")
                return .usage
            }
            return await command(global, words)
        }
    }

    /// Reports a usage error (exit 2).
    static func fail(usage error: Arguments.UsageError, help: String) -> ExitStatus {
        Console.errBlock(help)
        Console.err("keygate: \(error.message) (\(KeygateStatus.param))")
        return .usage
    }

    /// Reports a failure with a status: the last line is `keygate: message (errSecName number)`.
    static func fail(_ error: KeygateError) -> ExitStatus {
        Console.err("keygate: \(error.description)")
        return ExitStatus(status: error.status)
    }

    /// Reports a bad input file (exit 2): file, line, field and problem.
    static func fail(_ error: InputFileError) -> ExitStatus {
        Console.err("keygate: \(error.description) (\(KeygateStatus.param))")
        return .usage
    }
}
