import Foundation
import Testing

/// The command line as a whole: help, usage errors, the demo.
@Suite struct CommandLineTests {
    @Test func helpForEveryCommand() throws {
        for arguments in [["--help"], ["help"], ["evaluate", "--help"], ["demo", "--help"]] {
            let result = try KeygateBinary.run(arguments)
            #expect(result.status == 0, "\(arguments)")
            #expect(result.stdoutText.contains("usage: keygate"), "\(arguments)")
        }
    }

    @Test func usageErrorsExit2() throws {
        for (arguments, message) in [
            ([], "keygate: missing command"),
            (["frobnicate"], "keygate: unknown command 'frobnicate'"),
            (["demo", "--fast"], "keygate: unknown option '--fast'"),
            (["evaluate", "--context"], "keygate: option '--context' needs a value"),
            (["demo", "extra"], "keygate: unexpected argument 'extra'"),
        ] {
            let result = try KeygateBinary.run(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.lastErrorLine == message)
        }
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
