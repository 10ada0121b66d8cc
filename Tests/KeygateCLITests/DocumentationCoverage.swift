import Foundation

/// What `keygate --help` and `keygate <command> --help` print, read back, so the man page and
/// the shell completions can be checked against the binary and cannot rot.
enum DocumentationCoverage {
    /// The repository's root (this file is `Tests/KeygateCLITests/…`).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func file(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The command names listed under `commands:` in `keygate --help`.
    static func commandNames() -> [String] {
        guard let text = try? KeygateBinary.run(["--help"]).stdoutText else { return [] }
        var names: [String] = []
        var inCommands = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "commands:" {
                inCommands = true
            } else if inCommands, line.hasPrefix("  "), let name = line.split(separator: " ").first {
                names.append(String(name))
            } else if inCommands {
                break
            }
        }
        return names
    }

    /// Every option a help text names: `--long` words and `-x` letters (an example of another
    /// program's command line, `git config --global …`, is not keygate's).
    static func options(in text: String) -> Set<String> {
        let help = text.split(separator: "\n").filter { !$0.contains("git config") }.joined(separator: "\n")
        var found = Set<String>()
        for pattern in [#"(?<![\w-])--[a-z][a-z0-9-]*"#, #"(?<![\w-])-[a-zA-Z](?![\w-])"#] {
            let expression = try! NSRegularExpression(pattern: pattern)
            for match in expression.matches(in: help, range: NSRange(help.startIndex..., in: help)) {
                found.insert(String(help[Range(match.range, in: help)!]))
            }
        }
        return found
    }

    /// The global options (from `keygate --help`) and each command's (from its `--help`).
    static func optionsByCommand() throws -> [(command: String?, options: Set<String>)] {
        var result: [(String?, Set<String>)] = [(nil, options(in: try KeygateBinary.run(["--help"]).stdoutText))]
        for command in commandNames() {
            let help = try KeygateBinary.run([command, "--help"])
            result.append((command, options(in: help.stdoutText)))
        }
        return result
    }

    /// Whether `word` occurs in `text` as a whole word (not inside a longer option or name).
    static func contains(_ text: String, word: String) -> Bool {
        let escaped = NSRegularExpression.escapedPattern(for: word)
        return text.range(of: #"(?<![\w-])"# + escaped + #"(?![\w-])"#, options: .regularExpression) != nil
    }

    /// Runs a program found on PATH and returns its exit status and output (both streams).
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.currentDirectoryURL = root
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
