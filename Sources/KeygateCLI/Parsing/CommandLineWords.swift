/// The process's arguments (without the program name), read from the raw `argv` bytes.
///
/// `CommandLine.arguments` repairs invalid UTF-8 to U+FFFD, so `a\xff` and `a\xfe` would both
/// become `a\u{FFFD}` and name one item; here any argument that is not valid UTF-8 is refused
/// instead, naming the option it belongs to.
enum CommandLineWords {
    /// The words after the program name.
    /// - Throws: a usage error naming the first argument that is not valid UTF-8.
    static func read() throws(UsageError) -> [String] {
        var words: [String] = []
        for index in 1..<max(1, Int(CommandLine.argc)) {
            guard let pointer = CommandLine.unsafeArgv[index] else { break }
            guard let word = String(validatingCString: pointer) else {
                let shown = String(cString: pointer)  // invalid bytes shown as U+FFFD
                throw UsageError("\(describe(shown, after: words.last)) is not valid UTF-8: '\(shown)'")
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
}
