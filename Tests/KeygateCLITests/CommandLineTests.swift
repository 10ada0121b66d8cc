import Foundation
import KeygateTesting
import Testing

/// The command line as a whole: help, usage errors, the demo.
@Suite struct CommandLineTests {
    @Test func helpForEveryCommand() throws {
        let commands = [
            "add", "get", "update", "delete", "list", "evaluate", "export", "import", "audit", "lock", "prove", "demo",
        ]
        for arguments in [["--help"], ["help"]] + commands.map({ [$0, "--help"] }) {
            let result = try KeygateBinary.run(arguments)
            #expect(result.status == 0, "\(arguments)")
            #expect(result.stdoutText.contains("usage: keygate"), "\(arguments)")
        }
    }

    @Test func usageErrorsExit2() throws {
        for (arguments, message) in [
            ([], "keygate: missing command (errSecParam -50)"),
            (["frobnicate"], "keygate: unknown command 'frobnicate' (errSecParam -50)"),
            (["demo", "--fast"], "keygate: unknown option '--fast' (errSecParam -50)"),
            (["evaluate", "--context"], "keygate: option '--context' needs a value (errSecParam -50)"),
            (["demo", "extra"], "keygate: unexpected argument 'extra' (errSecParam -50)"),
        ] {
            let result = try KeygateBinary.run(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.lastErrorLine == message)
        }
    }

    /// A usage error shows the command's usage lines only (not its whole help), suggests the
    /// nearest option or command, and says where a global option given after the command goes.
    @Test func usageErrorsAreShortSuggestAndPlaceGlobalOptions() throws {
        for (arguments, message) in [
            (
                ["get", "--servce", "s", "-a", "a"],
                "keygate: unknown option '--servce'; did you mean '--service'? (errSecParam -50)"
            ),
            (["lst"], "keygate: unknown command 'lst'; did you mean 'list'? (errSecParam -50)"),
            (
                ["prove", "--factor", "passcode", "--passphrase-fd", "0"],
                "keygate: --passphrase-fd is a global option: put it before the command "
                    + "(keygate --passphrase-fd … <command> …) (errSecParam -50)"
            ),
            (["get", "--zzzzzz"], "keygate: unknown option '--zzzzzz' (errSecParam -50)"),
        ] {
            let result = try KeygateBinary.run(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.lastErrorLine == message, "\(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count <= 5, "the whole help was printed: \(result.stderr)")
            #expect(lines.first?.hasPrefix("usage: keygate") == true)
            #expect(result.stderr.contains("(add --help for the whole help)"))
        }
    }

    @Test func globalHelpBeforeACommandNeverRunsIt() throws {
        let world = try CLIWorld(password: nil)
        #expect(try world.add("api", "me", Data("do-not-print".utf8)).status == 0)
        for flag in ["--help", "-h"] {
            let result = try world.run([flag, "get", "--service", "api", "--account", "me"])
            #expect(result.status == 0)
            #expect(result.stdoutText.hasPrefix("usage: keygate get"))
            #expect(!result.stdoutText.contains("do-not-print"))
        }
        #expect(
            try world.run(["-h", "add", "--service", "api", "--account", "other"], stdin: Data("x".utf8)).status == 0)
        #expect(try world.run(["list"]).stdoutText.split(separator: "\n").count == 1, "nothing was added")
    }

    @Test func relativeStorePathsStayRelative() throws {
        let world = try CLIWorld(password: nil)
        let process = Process()
        process.executableURL = KeygateBinary.url
        process.arguments = ["--store", "rel/items.db", "add", "--service", "s", "--account", "a"]
        process.currentDirectoryURL = world.directory.url
        process.environment = world.environment
        let input = Pipe()
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(Data("v".utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let base = world.directory.url.path + "/rel/"
        #expect(FileManager.default.fileExists(atPath: base + "items.db"))
        #expect(
            FileManager.default.fileExists(atPath: base + "audit.jsonl"), "the trail sits beside the store, not at /")
    }

    @Test func demoPrintsExplainedDecisions() throws {
        let result = try KeygateBinary.run(["demo"])
        #expect(result.status == 0)
        let text = result.stdoutText
        #expect(text.contains("deny errSecInteractionNotAllowed"))
        #expect(text.contains("deny errSecItemNotFound"))
        #expect(text.contains("ask: biometry | passcode"))
        #expect(text.contains("ask: passcode"))
        #expect(text.split(separator: "\n").count >= 15)
    }
}
