import FoundationEssentials

/// A usage error: exit code 2, with the message and the usage of the command that refused it.
struct UsageError: Error, Equatable {
    /// What was wrong, naming the word or option (`unknown option '--fast'`).
    let message: String

    /// A usage error saying `message`.
    init(_ message: String) { self.message = message }
}

/// The words of one command line read against declared options: the hand-written parser of
/// `keygate` (no outside package can be fetched), shaped like swift-argument-parser's.
///
/// Options are `--name value`, `--name=value`, `-x value` or `-xvalue`; flags are `--name` or
/// `-x`. `-h`/`--help` anywhere asks for help. The word after an option that takes a value is
/// its value, whatever it starts with (`-a -me`). `--` ends the options: every word after it
/// is positional (`keygate import -- -old.backup`). Anything not declared is a usage error
/// naming the word, and so is a missing required option (checked here, once).
struct ParsedArguments {
    private(set) var values: [String: String] = [:]
    private(set) var flags: Set<String> = []
    /// The words that are not options, in order.
    private(set) var positionals: [String] = []
    /// Whether `-h` or `--help` was given.
    private(set) var wantsHelp = false

    /// Reads `words` against `options`. Stops at the first positional when `stopAtPositional`
    /// (so global options can be read before the command name). Unless help is asked for, every
    /// required option must be present.
    /// `elsewhere`: options that belong before the command (the global ones), named as such
    /// when given after it.
    init(
        _ words: ArraySlice<String>, options: [OptionSpec], stopAtPositional: Bool = false,
        elsewhere: [OptionSpec] = []
    ) throws(UsageError) {
        try read(words, options: options, stopAtPositional: stopAtPositional, elsewhere: elsewhere)
        guard !wantsHelp else { return }
        for option in options where option.isRequired && values[option.name] == nil {
            throw UsageError("missing required option '\(option.spelling)'")
        }
    }

    private mutating func read(
        _ words: ArraySlice<String>, options: [OptionSpec], stopAtPositional: Bool, elsewhere: [OptionSpec]
    ) throws(UsageError) {
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
            let option: OptionSpec
            var inlineValue: String?
            if word.hasPrefix("--"), word.count > 2 {
                var name = String(word.dropFirst(2))
                if let equals = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                }
                guard let declared = options.first(where: { $0.name == name }) else {
                    if let global = elsewhere.first(where: { $0.name == name }) {
                        throw UsageError(
                            "\(global.spelling) is a global option: put it before the command "
                                + "(keygate \(global.spelling)\(global.takesValue ? " …" : "") <command> …)")
                    }
                    let near = Self.nearest(name, in: options.map(\.name)).map { "; did you mean '--\($0)'?" } ?? ""
                    throw UsageError("unknown option '--\(name)'\(near)")
                }
                option = declared
            } else if word.hasPrefix("-"), word.count > 1 {
                let letter = word[word.index(after: word.startIndex)]
                guard let declared = options.first(where: { $0.short == letter }) else {
                    throw UsageError("unknown option '-\(letter)'")
                }
                option = declared
                let rest = word.dropFirst(2)
                if !rest.isEmpty {
                    guard declared.takesValue else {
                        throw UsageError("option '-\(letter)' takes no value (got '\(word)')")
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
            if option.takesValue {
                if let inlineValue {
                    values[option.name] = inlineValue
                } else {
                    guard index < words.endIndex else {
                        throw UsageError("option '\(option.spelling)' needs a value")
                    }
                    values[option.name] = words[index]
                    index += 1
                }
            } else {
                guard inlineValue == nil else { throw UsageError("option '\(option.spelling)' takes no value") }
                flags.insert(option.name)
            }
        }
    }

    /// The name among `names` closest to `word` (at most two edits away, or one that `word` is the
    /// start of), for a "did you mean"; nil when none is that close.
    static func nearest(_ word: String, in names: [String]) -> String? {
        if let prefixed = names.filter({ $0.hasPrefix(word) }).first, !word.isEmpty { return prefixed }
        let scored = names.map { ($0, editDistance(Array(word.utf8), Array($0.utf8))) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= min(2, max(1, word.count / 3)) else { return nil }
        return best.0
    }

    /// The Levenshtein distance between `a` and `b`.
    static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        guard !a.isEmpty else { return b.count }
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + [Int](repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = Swift.min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    // MARK: - Typed values

    /// Whether the flag `option` was given.
    func flag(_ option: OptionSpec) -> Bool {
        precondition(option.kind == .flag, "\(option.spelling) takes a value")
        return flags.contains(option.name)
    }

    /// Whether `option` (a flag or an option with a value) was given.
    func isGiven(_ option: OptionSpec) -> Bool {
        flags.contains(option.name) || values[option.name] != nil
    }

    /// The word given for `option`, or nil.
    func value(_ option: OptionSpec) -> String? {
        precondition(option.takesValue, "\(option.spelling) is a flag")
        return values[option.name]
    }

    /// The word given for the required `option`; the parser has checked it is there.
    func required(_ option: OptionSpec) -> String {
        precondition(option.isRequired, "\(option.spelling) is not declared required")
        guard let value = values[option.name] else { preconditionFailure("the parser checks required options") }
        return value
    }

    /// The path given for `option`, made absolute against the current directory.
    func path(_ option: OptionSpec) -> String? {
        value(option).map(Self.absolute)
    }

    /// The descriptor number given for `option`, or nil.
    /// - Throws: a usage error naming the option when the word is not a number 0 or more.
    func descriptor(_ option: OptionSpec) throws(UsageError) -> Int32? {
        guard let text = value(option) else { return nil }
        guard let descriptor = Int32(text), descriptor >= 0 else {
            throw UsageError("\(option.spelling) needs a file descriptor number, not '\(text)'")
        }
        return descriptor
    }

    /// The choice given for `option` (a ``OptionSpec/ValueKind/choice(_:_:)``), or nil.
    /// - Throws: a usage error naming the option and the choices for any other word.
    func choice(_ option: OptionSpec) throws(UsageError) -> String? {
        guard case .choice(_, let choices) = option.kind else { preconditionFailure("\(option.spelling) is no choice") }
        guard let text = value(option) else { return nil }
        guard choices.contains(text) else { throw Self.unknown(text, of: option, choices: choices) }
        return text
    }

    /// The case of `T` the required `option` names (its choices are `T`'s raw values).
    /// - Throws: a usage error naming the option and the choices for any other word.
    func required<T: RawRepresentable & CaseIterable>(_ option: OptionSpec, as type: T.Type) throws(UsageError) -> T
    where T.RawValue == String {
        let text = required(option)
        guard let value = T(rawValue: text) else {
            throw Self.unknown(text, of: option, choices: T.allCases.map(\.rawValue))
        }
        return value
    }

    private static func unknown(_ text: String, of option: OptionSpec, choices: [String]) -> UsageError {
        UsageError(
            "unknown \(option.name) '\(text)' (expected \(choices.dropLast().joined(separator: ", ")) "
                + "or \(choices.last ?? ""))")
    }

    /// Refuses positional words beyond the first `count`.
    func expectPositionals(atMost count: Int) throws(UsageError) {
        if positionals.count > count { throw UsageError("unexpected argument '\(positionals[count])'") }
    }

    /// `path` absolute: relative paths are taken from the current directory, never from the root.
    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }
}
