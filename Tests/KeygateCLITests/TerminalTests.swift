import Foundation
import Testing

/// `keygate` used from a terminal (issue 11, point 5): `add` and `update` ask for the value at
/// a hidden prompt, twice; `get` ends the value with a newline on a terminal only. Driven on a
/// real pseudo-terminal (util-linux `script`).
@Suite struct TerminalTests {
    /// Runs keygate with `arguments` on a terminal, then prints its exit status and the
    /// terminal's settings (`stty -a`), so a test can see the terminal was restored.
    static func start(_ world: CLIWorld, _ arguments: [String]) throws -> PseudoTerminal {
        let command = PseudoTerminal.quoted([KeygateBinary.url.path] + arguments)
        return try PseudoTerminal(#"\#(command); echo "exit=$?"; stty -a"#, environment: world.environment)
    }

    /// The settings line of `stty -a` says echo and line editing are on again.
    static func restored(_ shown: String) -> Bool {
        let words = Set(shown.split(whereSeparator: { $0.isWhitespace || $0 == ";" }))
        return words.contains("echo") && words.contains("icanon") && words.contains("isig") && !words.contains("-echo")
    }

    /// Types `value` at both prompts of `add`/`update`.
    static func answer(_ terminal: PseudoTerminal, _ first: String, _ second: String) {
        #expect(terminal.waitFor("Value for "), "\(terminal.shownText)")
        terminal.type(first)
        #expect(terminal.waitFor("Again: "), "\(terminal.shownText)")
        terminal.type(second)
    }

    @Test func addAsksTwiceWithEchoOffAndStoresTheLineTyped() throws {
        let world = try CLIWorld(password: nil)
        let terminal = try Self.start(world, ["add", "-s", "api", "-a", "me"])
        Self.answer(terminal, "typed-secret-42\n", "typed-secret-42\n")
        let shown = terminal.finish()
        #expect(shown.contains("Value for api/me: "))
        #expect(shown.contains("exit=0"), "\(shown)")
        #expect(!shown.contains("typed-secret-42"), "the value typed is never shown")
        #expect(Self.restored(shown), "\(shown)")
        // The line without its newline, exactly.
        let read = try world.run(["get", "--service", "api", "--account", "me"])
        #expect(read.stdout == Data("typed-secret-42".utf8))
    }

    @Test func updateAsksTwiceToo() throws {
        let world = try CLIWorld(password: nil)
        #expect(try world.add("api", "me", Data("old".utf8)).status == 0)
        let terminal = try Self.start(world, ["update", "-s", "api", "-a", "me"])
        Self.answer(terminal, "new value\n", "new value\n")
        let shown = terminal.finish()
        #expect(shown.contains("exit=0"), "\(shown)")
        #expect(!shown.contains("new value"))
        #expect(try world.run(["get", "-s", "api", "-a", "me"]).stdout == Data("new value".utf8))
    }

    /// Two different lines, Ctrl-C or Ctrl-D: nothing is stored, the terminal is restored, and
    /// cancelling is errSecUserCanceled (exit 6), never "no such item".
    @Test(
        arguments: [
            ("one\n", "other\n", "exit=8", "the two values typed differ"),
            ("one\n", "\u{03}", "exit=6", "cancelled"),
            ("\u{04}", nil, "exit=6", "cancelled"),
            ("\u{03}", nil, "exit=6", "cancelled"),
        ] as [(String, String?, String, String)])
    func mismatchOrCancelChangesNothing(first: String, second: String?, exit: String, message: String) throws {
        let world = try CLIWorld(password: nil)
        let terminal = try Self.start(world, ["add", "-s", "api", "-a", "me"])
        #expect(terminal.waitFor("Value for "))
        terminal.type(first)
        if let second {
            #expect(terminal.waitFor("Again: "))
            terminal.type(second)
        }
        let shown = terminal.finish()
        #expect(shown.contains(exit), "\(shown)")
        #expect(shown.contains(message), "\(shown)")
        #expect(!shown.contains("one") && !shown.contains("other"), "\(shown)")
        #expect(Self.restored(shown), "\(shown)")
        #expect(try world.run(["get", "-s", "api", "-a", "me"]).status == 3, "nothing was added")
    }

    @Test func noInteractionRefusesToPromptOnATerminal() throws {
        let world = try CLIWorld(password: nil)
        let terminal = try Self.start(world, ["--no-interaction", "add", "-s", "api", "-a", "me"])
        let shown = terminal.finish()
        #expect(shown.contains("exit=7"), "\(shown)")
        #expect(!shown.contains("Value for"))
    }

    /// A pipe still gets exact bytes: a trailing newline piped in is part of the value.
    @Test func aPipeIsReadByteForByte() throws {
        let world = try CLIWorld(password: nil)
        #expect(try world.add("api", "me", Data("line\n".utf8)).status == 0)
        #expect(try world.run(["get", "-s", "api", "-a", "me"]).stdout == Data("line\n".utf8))
    }

    /// On a terminal, get ends the value with a newline (the terminal shows it as CR LF); into a
    /// pipe it writes the exact bytes.
    @Test func getAddsANewlineOnATerminalOnly() throws {
        let world = try CLIWorld(password: nil)
        #expect(try world.add("api", "me", Data("no-newline".utf8)).status == 0)
        let shown = try Self.start(world, ["get", "-s", "api", "-a", "me"]).finish()
        #expect(shown.contains("no-newline\r\nexit=0"), "\(shown)")
        #expect(try world.run(["get", "-s", "api", "-a", "me"]).stdout == Data("no-newline".utf8))
    }
}
