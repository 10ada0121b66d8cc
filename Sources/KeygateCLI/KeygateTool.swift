import Dispatch
import Glibc
import Keygate
import KeygatePolicy

/// `keygate`: global options, then one command. The executable's `main.swift` is
/// `KeygateTool.start()`.
public enum KeygateTool {
    /// Runs ``main()`` from synchronous code and exits with the command's status, without
    /// starting the concurrency runtime's threads for a command that never suspends (a plain
    /// `get`; the bench's "Whole process" rows): the command runs on the calling thread until it first
    /// awaits something that is not ready (a prompt), and only then does the main thread hand
    /// over to Dispatch (the task resumes on the runtime's threads, or on the main queue).
    public static func start() -> Never {
        Task.immediate { await main() }
        dispatchMain()
    }

    /// Runs the process's command line (a credential helper's name, `git-credential-keygate`,
    /// picks its command) and exits with the command's status.
    public static func main() async -> Never {
        let environment = CommandEnvironment.live
        let status: ExitStatus
        do throws(UsageError) {
            let words = HelperInvocation.words(
                invokedAs: CommandLine.arguments.first ?? "keygate", try CommandLineWords.read())
            status = await run(words, in: environment)
        } catch {
            status = environment.console.fail(usage: error, help: usage)
        }
        exit(status.rawValue)
    }

    /// The commands, in the order `keygate --help` lists them.
    static var commands: [any CommandEntry.Type] {
        [
            AddCommand.self, GetCommand.self, UpdateCommand.self, DeleteCommand.self, ListCommand.self,
            EvaluateCommand.self, ExportCommand.self, ImportCommand.self, AuditCommand.self, LockCommand.self,
            StatusCommand.self, AgentCommand.self,
            ProveCommand.self, PolicyCommand.self, KeyCommand.self, SSHAgentCommand.self, DemoCommand.self,
            GitCredentialCommand.self,
            DockerCredentialCommand.self,
        ]
    }

    /// `keygate --help`.
    static let usage: String = {
        let configurations = commands.map { command in command.configuration }
        let width = configurations.map { $0.name.count }.max() ?? 0
        let lines = configurations.map { "  " + $0.name.padding(to: width) + "  " + $0.summary }
        return """
            usage: keygate [global options] <command> [options] [--] [arguments]

            commands:
            \(lines.joined(separator: "\n"))

            global options:
            \(OptionSpec.helpLines(GlobalOptions.options + [OptionSpec.help]))

            Run 'keygate <command> --help' for a command's options, 'man keygate' for the manual.
            """
    }()

    /// Runs `words` (the command line without the program name) in `environment` and returns
    /// the exit status: global options, the command's options, `validate()`, the organisation
    /// policies when the command opens the store, then `run`.
    static func run(_ words: [String], in environment: CommandEnvironment) async -> ExitStatus {
        let console = environment.console
        let global: GlobalOptions
        let entry: any CommandEntry.Type
        let commandWords: ArraySlice<String>
        do throws(UsageError) {
            let arguments = try ParsedArguments(words[...], options: GlobalOptions.options, stopAtPositional: true)
            if arguments.flag(GlobalOptions.version) {
                console.out("keygate \(KeygateVersion.current)")
                return .success
            }
            guard let name = arguments.positionals.first else {
                if arguments.wantsHelp {
                    console.out(usage)
                    return .success
                }
                throw UsageError("missing command")
            }
            if name == "help" {
                console.out(usage)
                return .success
            }
            guard let found = commands.first(where: { $0.configuration.name == name }) else {
                let near = ParsedArguments.nearest(name, in: commands.map { $0.configuration.name })
                throw UsageError("unknown command '\(name)'" + (near.map { "; did you mean '\($0)'?" } ?? ""))
            }
            entry = found
            // `keygate --help get …` shows get's help; it never runs the command.
            commandWords = ArraySlice((arguments.wantsHelp ? ["--help"] : []) + arguments.positionals.dropFirst())
            global = try GlobalOptions(
                arguments, variables: environment.variables, choosesMode: found.configuration.choosesMode)
        } catch {
            return console.fail(usage: error, help: usage)
        }
        let command: any RunnableCommand
        do throws(ParseFailure) {
            switch try entry.parse(commandWords) {
            case .help(let text):
                console.out(text)
                return .success
            case .command(let parsed):
                command = parsed
            }
            do throws(UsageError) {
                try command.validate()
            } catch {
                throw ParseFailure(error: error, help: type(of: command).configuration.help)
            }
        } catch {
            return console.fail(usage: error.error, help: error.help)
        }
        return await run(command, global: global, in: environment)
    }

    /// Runs a parsed and validated command: loads the organisation policies first when it
    /// opens the embedded store (a broken policy file refuses to run it, exit 2, naming
    /// file:line:column; it never runs without its rules).
    static func run(_ command: any RunnableCommand, global: GlobalOptions, in environment: CommandEnvironment) async
        -> ExitStatus
    {
        var global = global
        // Through the daemon, its own root-owned policies apply; the user's are not read.
        if type(of: command).configuration.loadsPolicies, global.mode == .embedded {
            do throws(KeygateError) {
                global.policySet = try global.store.loadPolicies(environment.variables)
            } catch {
                return environment.console.refuse(error)
            }
        }
        do throws(KeygateError) {
            return try await command.run(CommandContext(global: global, environment: environment))
        } catch {
            return environment.console.fail(error)
        }
    }
}
