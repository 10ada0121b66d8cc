import Foundation
import Testing

/// The bash completion runs in bash with bash-completion loaded (it needs `_init_completion`,
/// Debian's bash-completion package): a command, a protection class and an access-control
/// flag after a comma complete.
@Suite struct BashCompletionTests {
    static let library = "/usr/share/bash-completion/bash_completion"

    /// COMPREPLY for the words `line` (the cursor after the last one).
    static func complete(_ line: [String]) throws -> [String] {
        let script = DocumentationCoverage.root.appendingPathComponent("Documentation/completions/keygate.bash").path
        let words = line.map { "'\($0)'" }.joined(separator: " ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [
            "-c",
            """
            source \(library) && source '\(script)' || exit 3
            COMP_WORDS=(\(words)); COMP_CWORD=\(line.count - 1); COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
            _keygate; printf '%s\\n' "${COMPREPLY[@]}"
            """,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "bash could not load \(library) or the completion")
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test func commandsClassesAndFlagsComplete() throws {
        try #require(FileManager.default.fileExists(atPath: Self.library), "bash-completion is not installed")
        #expect(try Self.complete(["keygate", "ge"]) == ["get"])
        #expect(
            try Set(Self.complete(["keygate", "add", "--accessible", "whenU"]))
                == ["whenUnlocked", "whenUnlockedThisDeviceOnly"])
        #expect(
            try Self.complete(["keygate", "add", "--access-control", "userPresence,bio"]).sorted() == [
                "userPresence,biometryAny", "userPresence,biometryCurrentSet",
            ])
    }
}
