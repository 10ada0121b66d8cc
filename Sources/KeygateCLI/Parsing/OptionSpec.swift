/// One declared option of a command: what the parser accepts and what the help text shows,
/// read from the same value.
///
/// A command declares each option once (a shared group, such as ``ItemOptions``, declares the
/// options several commands take); the parser reads words against these declarations, and the
/// option lines of the command's help are rendered from them.
struct OptionSpec: Sendable, Hashable {
    /// What follows the option on the command line.
    enum ValueKind: Sendable, Hashable {
        /// Nothing: the option is a flag.
        case flag
        /// A word, called `placeholder` in help (`S`, `FLAGS`).
        case text(_ placeholder: String)
        /// A path, called `placeholder` in help; a relative path is taken from the current
        /// directory, never from the filesystem root.
        case path(_ placeholder: String)
        /// A file descriptor number (`N` in help), 0 or more.
        case descriptor
        /// One of `choices`, called `placeholder` in help.
        case choice(_ placeholder: String, _ choices: [String])

        /// What the value is called in help, or nil for a flag.
        var placeholder: String? {
            switch self {
            case .flag: nil
            case .text(let name), .path(let name), .choice(let name, _): name
            case .descriptor: "N"
            }
        }
    }

    /// The long name, without its dashes (`service` for `--service`).
    let name: String
    /// The one-letter spelling (`-s` for `--service`), where one is conventional.
    let short: Character?
    /// What follows the option.
    let kind: ValueKind
    /// The help line's description.
    let help: String
    /// Whether the command refuses to run without it (the parser checks, once).
    let isRequired: Bool

    /// An option called `--name` (and `-short`) taking `kind`.
    init(_ name: String, short: Character? = nil, _ kind: ValueKind, required: Bool = false, help: String) {
        precondition(!help.isEmpty, "every option says what it is for")
        self.name = name
        self.short = short
        self.kind = kind
        self.help = help
        self.isRequired = required
    }

    /// Whether the option takes a value (a flag does not).
    var takesValue: Bool { kind != .flag }

    /// `--name`, as messages name the option.
    var spelling: String { "--" + name }

    /// The `-x, --name VALUE` column of a help line; long-only options are indented so their
    /// `--` lines up with the others'.
    var helpLabel: String {
        (short.map { "-\($0), " } ?? "    ") + spelling + (kind.placeholder.map { " " + $0 } ?? "")
    }

    /// `-h, --help`, which every command accepts (read by the parser itself, never declared).
    static let help = OptionSpec("help", short: "h", .flag, help: "show this help and exit")

    /// The option lines of a help text (`-s, --service S   the item's service`), the
    /// descriptions aligned in one column whatever the longest option.
    static func helpLines(_ options: [OptionSpec]) -> String {
        let lefts = options.map { "  " + $0.helpLabel }
        let width = (lefts.map(\.count).max() ?? 0) + 2
        return zip(lefts, options).map { left, option in
            left.padding(to: width) + option.help + (option.isRequired ? " (required)" : "")
        }
        .joined(separator: "\n")
    }
}

extension String {
    /// The string padded with spaces to `width` characters (unchanged when longer).
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
