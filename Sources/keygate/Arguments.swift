/// The hand-written argument reader of `keygate` (no outside package can be fetched).
///
/// Options are `--name value`, `--name=value`, `-x value` or `-xvalue`; flags are `--name` or
/// `-x`. `-h`/`--help` anywhere asks for help. The word after an option that takes a value is
/// its value, whatever it starts with (`-a -me`). `--` ends the options: every word after it
/// is positional (`keygate import -- -old.backup`). Anything not declared is a usage error
/// naming the word.
struct Arguments {
    /// One declared option.
    struct Option {
        let name: String
        /// The one-letter spelling (`-s` for `--service`), where one is conventional.
        let short: Character?
        /// What the value is called in help (`S`, `FILE`), or nil for a flag.
        let valueName: String?
        let help: String

        /// Whether the option takes a value (a flag does not).
        var takesValue: Bool { valueName != nil }

        /// An option taking a value called `value` in help, or a flag when `value` is nil.
        init(name: String, short: Character? = nil, value: String?, help: String) {
            self.name = name
            self.short = short
            self.valueName = value
            self.help = help
        }

        /// The `-x, --name VALUE` column of a help line; long-only options are indented so
        /// their `--` lines up with the others'.
        var helpLabel: String {
            (short.map { "-\($0), " } ?? "    ") + "--" + name + (valueName.map { " " + $0 } ?? "")
        }
    }

    /// `-h, --help`, which every command accepts (read by the parser itself, never declared).
    static let helpOption = Option(name: "help", short: "h", value: nil, help: "show this help and exit")

    /// A usage error: exit code 2, with the message and the command's usage.
    struct UsageError: Error {
        let message: String
    }

    private(set) var values: [String: String] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positionals: [String] = []
    private(set) var wantsHelp = false

    /// Reads `words` against `options`. Stops at the first positional when `stopAtPositional`
    /// (so global options can be read before the command name).
    init(_ words: ArraySlice<String>, options: [Option], stopAtPositional: Bool = false) throws(UsageError) {
        var index = words.startIndex
        while index < words.endIndex {
            let word = words[index]
            index += 1
            if word == "-h" || word == "--help" {
                wantsHelp = true
                continue
            }
            if word == "--" {
                positionals += words[index...]
                return
            }
            let option: Option
            var inlineValue: String?
            if word.hasPrefix("--"), word.count > 2 {
                var name = String(word.dropFirst(2))
                if let equals = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                }
                guard let declared = options.first(where: { $0.name == name }) else {
                    throw UsageError(message: "unknown option '--\(name)'")
                }
                option = declared
            } else if word.hasPrefix("-"), word.count > 1 {
                let letter = word[word.index(after: word.startIndex)]
                guard let declared = options.first(where: { $0.short == letter }) else {
                    throw UsageError(message: "unknown option '-\(letter)'")
                }
                option = declared
                let rest = word.dropFirst(2)
                if !rest.isEmpty {
                    guard declared.takesValue else {
                        throw UsageError(message: "option '-\(letter)' takes no value (got '\(word)')")
                    }
                    inlineValue = String(rest)
                }
            } else {
                positionals.append(word)
                if stopAtPositional {
                    positionals += words[index...]
                    return
                }
                continue
            }
            let name = option.name
            if option.takesValue {
                if let inlineValue {
                    values[name] = inlineValue
                } else {
                    guard index < words.endIndex else { throw UsageError(message: "option '--\(name)' needs a value") }
                    values[name] = words[index]
                    index += 1
                }
            } else {
                guard inlineValue == nil else { throw UsageError(message: "option '--\(name)' takes no value") }
                flags.insert(name)
            }
        }
    }

    /// For commands without options or arguments: nil to go on, or the exit status after
    /// showing the help or a usage error.
    static func bare(_ words: ArraySlice<String>, help: String) -> ExitStatus? {
        do throws(UsageError) {
            let arguments = try Arguments(words, options: [])
            if arguments.wantsHelp {
                Console.out(help)
                return .success
            }
            try arguments.expectNoPositionals()
            return nil
        } catch {
            return KeygateCommand.fail(usage: error, help: help)
        }
    }

    /// The value of a required option.
    func required(_ name: String) throws(UsageError) -> String {
        guard let value = values[name] else { throw UsageError(message: "missing required option '--\(name)'") }
        return value
    }

    /// Refuses positional words when a command takes none.
    func expectNoPositionals() throws(UsageError) {
        if let first = positionals.first { throw UsageError(message: "unexpected argument '\(first)'") }
    }

    /// A PAM service name given on the command line, checked before any PAM call: it must
    /// start with `keygate` and go on with lowercase letters, digits, `-`, `_` or `.` only
    /// (`keygate`, `keygate-biometry`, `keygate-work`). So a caller, root included, can never
    /// pick another service (one with `pam_rootok` or `pam_permit`) to prove presence.
    static func pamService(_ value: String, option: String) throws(UsageError) -> String {
        let rest = value.utf8.dropFirst(Self.pamServicePrefix.utf8.count)
        guard value.hasPrefix(Self.pamServicePrefix),
            rest.allSatisfy({ byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
            })
        else {
            throw UsageError(
                message: "--\(option) '\(value)' is not allowed: only PAM services named keygate… "
                    + "(lowercase letters, digits, '-', '_', '.') can be used")
        }
        return value
    }

    /// What every PAM service keygate may use is named with.
    static let pamServicePrefix = "keygate"

    /// The process's arguments (without the program name), read from the raw `argv` bytes.
    ///
    /// `CommandLine.arguments` repairs invalid UTF-8 to U+FFFD, so `a\xff` and `a\xfe` would
    /// both become `a\u{FFFD}` and name one item; here any argument that is not valid UTF-8
    /// is refused instead, naming the option it belongs to.
    static func commandLine() throws(UsageError) -> [String] {
        var words: [String] = []
        for index in 1..<max(1, Int(CommandLine.argc)) {
            guard let pointer = CommandLine.unsafeArgv[index] else { break }
            guard let word = String(validatingCString: pointer) else {
                let shown = String(cString: pointer)  // invalid bytes shown as U+FFFD
                throw UsageError(message: "\(describe(shown, after: words.last)) is not valid UTF-8: '\(shown)'")
            }
            words.append(word)
        }
        return words
    }

    /// Which argument a bad word is, for a message: the value of the option it belongs to
    /// when it can tell, else its position.
    private static func describe(_ word: String, after previous: String?) -> String {
        if word.hasPrefix("--"), let equals = word.firstIndex(of: "="), !word[..<equals].contains("\u{FFFD}") {
            return "the value of '\(word[..<equals])'"
        }
        if let previous, previous.hasPrefix("--"), previous.count > 2, !previous.contains("=") {
            return "the value after '\(previous)'"
        }
        if let previous, previous.count == 2, previous.hasPrefix("-"), previous != "--" {
            return "the value after '\(previous)'"
        }
        if word.count > 2, word.hasPrefix("-"), !word.hasPrefix("--"), word.dropFirst().first != "\u{FFFD}" {
            return "the value of '\(word.prefix(2))'"
        }
        return "an argument"
    }

    /// The option lines of a help text (`-s, --service S   the item's service`), the
    /// descriptions aligned in one column whatever the longest option.
    static func helpLines(_ options: [Option]) -> String {
        let lefts = options.map { "  " + $0.helpLabel }
        let width = (lefts.map(\.count).max() ?? 0) + 2
        return zip(lefts, options).map { left, option in left.padding(to: width) + option.help }
            .joined(separator: "\n")
    }
}

extension String {
    /// The string padded with spaces to `width` characters (unchanged when longer).
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
