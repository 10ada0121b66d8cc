import KeygatePolicy

/// A command's name, the line `keygate --help` lists it with, its help and its options.
struct CommandConfiguration: Sendable {
    /// The word that names the command (`get`).
    let name: String
    /// The line beside the name in `keygate --help`.
    let summary: String
    /// The declared options, which the parser reads and the help lists.
    let options: [OptionSpec]
    /// How many positional words the command takes at most (nil: any number).
    let maximumPositionals: Int?
    /// Whether the organisation policies must be loaded before it runs (the commands that
    /// open the store): a broken policy file then refuses to run it.
    let loadsPolicies: Bool
    /// Whether it runs in either mode (embedded or through `keygated`, ``Mode``): the mode is
    /// chosen before it runs, and daemon mode refuses the options only embedded mode has.
    /// Other commands always run in this process.
    let choosesMode: Bool
    /// The text `--help` prints, put together only when asked for: looking a command up (every
    /// run does) builds no help text.
    var help: String {
        givenHelp ?? (options.isEmpty ? discussion : discussion + "\n\n" + OptionSpec.helpLines(options))
    }
    private let discussion: String
    private let givenHelp: String?

    /// A command whose help is `discussion` followed by its option lines, or `help` when given
    /// (subcommands show their group's).
    init(
        name: String, summary: String, discussion: String, options: [OptionSpec] = [],
        maximumPositionals: Int? = 0, loadsPolicies: Bool = false, choosesMode: Bool = false, help: String? = nil
    ) {
        self.name = name
        self.summary = summary
        self.options = options
        self.maximumPositionals = maximumPositionals
        self.loadsPolicies = loadsPolicies
        self.choosesMode = choosesMode
        self.discussion = discussion
        givenHelp = help
    }
}

/// What reading a command's words gave: a command to run, or a help text to print.
enum ParseOutcome {
    /// `--help` was asked for.
    case help(String)
    /// The command, its options read into its properties (not yet validated).
    case command(any RunnableCommand)
}

/// A usage error together with the help of the command that refused it.
struct ParseFailure: Error {
    /// What was wrong.
    let error: UsageError
    /// The usage printed above the message.
    let help: String
}

/// A name `keygate --help` lists: one command, or a group of subcommands.
protocol CommandEntry {
    /// The name, summary, options and help.
    static var configuration: CommandConfiguration { get }
    /// Reads `words` (what follows the command's name).
    static func parse(_ words: ArraySlice<String>) throws(ParseFailure) -> ParseOutcome
}

/// A command ready to run: checked together by ``validate()``, then ``run(_:)``.
protocol RunnableCommand: CommandEntry, Sendable {
    /// Refuses a combination of options and arguments that cannot run (exit 2), before
    /// anything is opened or read.
    func validate() throws(UsageError)
    /// Runs the command and returns its exit status; a failure thrown is reported as
    /// `keygate: message (errSecName number)` with the status's exit code.
    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus
}

extension RunnableCommand {
    /// Nothing to check beyond the parser's.
    func validate() throws(UsageError) {}
}

/// One `keygate` command read by the parser: options declared in its configuration, read once
/// into typed properties by ``init(parsing:)``, then validated and run.
protocol Command: RunnableCommand {
    /// Reads the options and arguments into the command's properties. Required options are
    /// present (the parser checked them).
    init(parsing arguments: ParsedArguments) throws(UsageError)
}

extension Command {
    /// Reads `words` against the configuration's options.
    static func parse(_ words: ArraySlice<String>) throws(ParseFailure) -> ParseOutcome {
        do throws(UsageError) {
            let arguments = try ParsedArguments(
                words, options: configuration.options, elsewhere: GlobalOptions.options)
            if arguments.wantsHelp { return .help(configuration.help) }
            if let maximum = configuration.maximumPositionals { try arguments.expectPositionals(atMost: maximum) }
            return .command(try Self(parsing: arguments))
        } catch {
            throw ParseFailure(error: error, help: configuration.help)
        }
    }
}

/// A command made of subcommands (`audit show`, `policy check`): the first word that is not
/// an option names the subcommand, and every other word is the subcommand's.
protocol CommandGroup: CommandEntry {
    /// The subcommands, by ``CommandConfiguration/name``.
    static var subcommands: [any Command.Type] { get }
    /// The usage error when no subcommand is named.
    static var missingSubcommand: UsageError { get }
    /// The usage error for a word that names no subcommand.
    static func unknownSubcommand(_ word: String) -> UsageError
}

extension CommandGroup {
    /// The configuration of one of the group's subcommands: its `--help` is the group's.
    static func subcommand(
        _ name: String, summary: String, options: [OptionSpec] = [], maximumPositionals: Int? = 0
    ) -> CommandConfiguration {
        CommandConfiguration(
            name: name, summary: summary, discussion: "", options: options, maximumPositionals: maximumPositionals,
            help: configuration.help)
    }

    /// Finds the subcommand named by the first word that is not an option and reads the
    /// other words as its own; `--help` alone shows the group's help.
    static func parse(_ words: ArraySlice<String>) throws(ParseFailure) -> ParseOutcome {
        guard let index = words.firstIndex(where: { !$0.hasPrefix("-") }) else {
            if words.contains(where: { $0 == "-h" || $0 == "--help" }) { return .help(configuration.help) }
            throw ParseFailure(error: missingSubcommand, help: configuration.help)
        }
        guard let subcommand = subcommands.first(where: { $0.configuration.name == words[index] }) else {
            throw ParseFailure(error: unknownSubcommand(words[index]), help: configuration.help)
        }
        return try subcommand.parse(words[..<index] + words[(index + 1)...])
    }
}
