import Foundation
import Glibc
import Testing

/// `keygate --daemon` answering the daemon's relayed PAM prompts from `--passphrase-fd` (issue 15,
/// tests, first point): for a `userPresence` item, the right passphrase gives the value, a wrong
/// one exit 5, end of file on the descriptor (a cancel) exit 6, no answer within the daemon's
/// `prompt-timeout` exit 7. The daemon runs PAM (pam_wrapper + pam_matrix, ``RelayFixture``).
@Suite struct CLIPromptTests {
    static let a = DaemonFixture.userA
    static let get = ["--daemon", "--passphrase-fd", "3", "get", "-s", "gated", "-a", "me"]

    /// A daemon with PAM (the fixture keeps the ``RelayFixture`` alive: releasing it stops the
    /// daemon), user A's `userPresence` item added through the CLI.
    static func world(config: String = "", chatty: Bool = false) throws -> CLIFixture {
        let world = try RelayFixture(config: config, chatty: chatty)
        try world.daemon.start()
        let cli = CLIFixture(daemon: world.daemon, owner: world)
        let added = try cli.run(
            as: a, ["--daemon", "add", "-s", "gated", "-a", "me", "--access-control", "userPresence"],
            stdin: "the-value")
        #expect(added.status == 0, "\(added.stderr)")
        return cli
    }

    @Test func theRightPassphraseOnTheDescriptorReadsTheValue() throws {
        let cli = try Self.world()
        let read = try cli.run(as: Self.a, Self.get, answers: .lines([RelayFixture.passwords[Self.a]!]))
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout == "the-value")
    }

    /// A PAM stack that shows an info and an error message before it asks (as pam_fprintd and
    /// pam_faillock do): the messages reach the terminal's side unanswered, and the passphrase
    /// still answers the prompt after them. (KeygateClient used to acknowledge each message with
    /// an empty answer, which the daemon took as out of order and ended the connection.)
    @Test func moduleMessagesBeforeThePromptAreShownAndTheRightPassphraseStillReads() throws {
        let cli = try Self.world(chatty: true)
        let read = try cli.run(as: Self.a, Self.get, answers: .lines([RelayFixture.passwords[Self.a]!]))
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout == "the-value")
        let wrong = try cli.run(as: Self.a, Self.get, answers: .lines(["wrong"]))
        #expect(wrong.status == 5, "\(wrong.stderr)")
    }

    @Test func aWrongPassphraseIsExit5() throws {
        let cli = try Self.world()
        // Another user's (right) password proves nobody but that user: still wrong for A.
        for answer in ["wrong", RelayFixture.passwords[DaemonFixture.userB]!] {
            let read = try cli.run(as: Self.a, Self.get, answers: .lines([answer]))
            #expect(read.status == 5, "\(answer): \(read.stderr)")
            #expect(read.stdout.isEmpty)
            #expect(read.lastErrorLine.hasSuffix("(errSecAuthFailed -25293)"), "\(read.stderr)")
        }
    }

    @Test func endOfFileOnTheDescriptorCancelsWithExit6() throws {
        let cli = try Self.world()
        let read = try cli.run(as: Self.a, Self.get, answers: .lines([]))
        #expect(read.status == 6, "\(read.stderr)")
        #expect(read.stdout.isEmpty)
        #expect(read.lastErrorLine.hasSuffix("(errSecUserCanceled -128)"), "\(read.stderr)")
    }

    @Test func noAnswerWithinThePromptTimeoutIsExit7() throws {
        let cli = try Self.world(config: "prompt-timeout = 1\n")
        let started = Date()
        let read = try cli.run(as: Self.a, Self.get, answers: .silence, timeout: 20)
        #expect(read.status == 7, "\(read.stderr)")
        #expect(read.stdout.isEmpty)
        #expect(Date().timeIntervalSince(started) < 15)
    }

    @Test func withNoWayToAskItIsExit7WithoutAPrompt() throws {
        let cli = try Self.world()
        // No terminal (setpriv runs it without one) and no descriptor, or --no-interaction.
        for words in [["--daemon", "get"], ["--daemon", "--no-interaction", "--passphrase-fd", "3", "get"]] {
            let read = try cli.run(
                as: Self.a, words + ["-s", "gated", "-a", "me"], answers: .lines([RelayFixture.passwords[Self.a]!]))
            #expect(read.status == 7, "\(words): \(read.stderr)")
            #expect(read.stdout.isEmpty)
        }
    }

    @Test func lockAndTheAuditTrailGoToTheDaemon() throws {
        let cli = try Self.world()
        let locked = try cli.run(as: Self.a, ["--daemon", "lock"])
        #expect(locked.status == 0, "\(locked.stderr)")
        #expect(locked.lastErrorLine == "keygate: keygated forgot this session's proofs")
        // The user's embedded trail is never what daemon mode shows: the daemon serves the
        // caller's own trail, or answers errSecUnimplemented (exit 1) while it keeps none.
        #expect(try cli.run(as: Self.a, ["--embedded", "add", "-s", "local-only", "-a", "me"], stdin: "x").status == 0)
        for words in [["--daemon", "audit", "show"], ["--daemon", "audit", "verify"]] {
            let result = try cli.run(as: Self.a, words)
            #expect(!result.stdout.contains("local-only"), "\(words)")
            if result.status != 0 {
                #expect(result.status == 1, "\(words): \(result.stderr)")
                #expect(result.lastErrorLine.hasSuffix("(errSecUnimplemented -4)"), "\(words): \(result.stderr)")
            }
        }
    }

    @Test func theLockoutHoldsWhateverTheClientDeletes() throws {
        let cli = try Self.world()
        for _ in 0..<5 {
            #expect(try cli.run(as: Self.a, Self.get, answers: .lines(["wrong"])).status == 5)
        }
        // The user wipes everything it owns (an embedded failure ledger would be there) ...
        let wiped = try cli.daemon.run(
            as: Self.a, "/bin/sh", ["-c", "rm -rf \"$1\"/* && echo wiped", "sh", cli.home(Self.a)])
        #expect(wiped.lines == ["wiped"], "\(wiped.output)")
        // ... and the right passphrase is still refused: the counter is the daemon's.
        let read = try cli.run(as: Self.a, Self.get, answers: .lines([RelayFixture.passwords[Self.a]!]))
        #expect(read.status == 5, "\(read.stderr)")
        #expect(read.stdout.isEmpty)
    }

    @Test func ctrlCAtARelayedPromptOnTheTerminalCancelsWithExit6() throws {
        let cli = try Self.world()
        let terminal = try CLITerminal(cli, as: Self.a, ["--daemon", "get", "-s", "gated", "-a", "me"])
        #expect(terminal.wait(for: "assword"), "the prompt never showed: \(terminal.screen)")
        terminal.type([0x03])
        let result = try #require(terminal.finish(), "keygate did not exit after Ctrl-C")
        #expect(result.status == 6, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(terminal.isCooked, "the terminal was left without echo")
    }

    @Test func aTerminalPromptTheDaemonStopsWaitingForIsExit7AndTheTerminalIsPutBack() throws {
        let cli = try Self.world(config: "prompt-timeout = 1\n")
        let terminal = try CLITerminal(cli, as: Self.a, ["--daemon", "get", "-s", "gated", "-a", "me"])
        #expect(terminal.wait(for: "assword"), "the prompt never showed: \(terminal.screen)")
        let result = try #require(terminal.finish(timeout: 15), "keygate did not exit after the daemon's timeout")
        #expect(result.status == 7, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(terminal.isCooked, "the terminal was left without echo")
    }

    /// `--reuse-seconds` is the window the request asks the daemon for: in one login session and
    /// terminal, a proof made with a window serves the next command asking for one (no prompt,
    /// even with `--no-interaction`), and a command asking for none is refused (exit 7).
    @Test func reuseSecondsIsTheWindowTheDaemonIsAskedFor() throws {
        let cli = try Self.world()
        let get = "--daemon --reuse-seconds 60"
        let script = """
            printf 'pass-a\\n' | "$0" \(get) --passphrase-fd 0 get -s gated -a me; echo " rc=$?"
            "$0" \(get) --no-interaction get -s gated -a me; echo " rc=$?"
            "$0" --daemon --no-interaction get -s gated -a me; echo " rc=$?"
            """
        let terminal = try CLITerminal(
            cli, as: Self.a, [], script: script, session: ReuseTests.sessionCounter.next())
        let result = try #require(terminal.finish(), "the commands did not finish")
        #expect(result.stdout == "the-value rc=0\nthe-value rc=0\n rc=7\n", "\(result.stdout)\(result.stderr)")
    }
}
