import Foundation
import Glibc
import Testing

/// `keygate` against a real `keygated` (issue 15, point 5): the mode-selection rule, `status` in
/// both modes, and the item commands and credential helpers with the same exit codes in both
/// modes. Clients run as unprivileged uids; the daemon as root.
@Suite struct CLIModeTests {
    static let a = DaemonFixture.userA

    @Test func theModeFollowsTheSocketAndTheFlags() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        let cli = CLIFixture(daemon: daemon)
        // No flag and a socket: the daemon keeps the item ...
        #expect(try cli.run(as: Self.a, ["add", "-s", "api", "-a", "me"], stdin: "from-daemon").status == 0)
        #expect(try cli.run(as: Self.a, ["get", "-s", "api", "-a", "me"]).stdout == "from-daemon")
        // ... which the embedded store does not have.
        #expect(try cli.run(as: Self.a, ["--embedded", "get", "-s", "api", "-a", "me"]).status == 3)
        #expect(try cli.run(as: Self.a, ["--embedded", "add", "-s", "api", "-a", "me"], stdin: "local").status == 0)
        #expect(try cli.run(as: Self.a, ["--embedded", "get", "-s", "api", "-a", "me"]).stdout == "local")
        #expect(try cli.run(as: Self.a, ["--daemon", "get", "-s", "api", "-a", "me"]).stdout == "from-daemon")
        // KEYGATE_SOCKET naming no socket: embedded.
        let elsewhere = try cli.run(
            as: Self.a, ["get", "-s", "api", "-a", "me"], environment: ["KEYGATE_SOCKET": daemon.directory + "/none"])
        #expect(elsewhere.stdout == "local")
        #expect(
            try cli.run(as: Self.a, ["--daemon", "--embedded", "list"]).lastErrorLine
                == "keygate: --daemon and --embedded cannot be used together (errSecParam -50)")
    }

    @Test func aDeadDaemonIsAnErrorNamingTheSocketNeverAFallBack() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        let cli = CLIFixture(daemon: daemon)
        #expect(try cli.run(as: Self.a, ["--embedded", "add", "-s", "api", "-a", "me"], stdin: "local").status == 0)
        // Killed: its socket stays behind, nothing answers on it.
        daemon.stop(signal: SIGKILL)
        #expect(DaemonFixtureSocket.isSocket(daemon.socket))
        for words in [["get", "-s", "api", "-a", "me"], ["--daemon", "get", "-s", "api", "-a", "me"], ["status"]] {
            let result = try cli.run(as: Self.a, words)
            #expect(result.status == 1, "\(words): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(words)")
            #expect(result.lastErrorLine.contains(daemon.socket), "\(words): \(result.stderr)")
            #expect(result.lastErrorLine.hasSuffix("(errSecNotAvailable -25291)"), "\(words): \(result.stderr)")
        }
        // --daemon with nothing at all at the path: the same error.
        let missing = daemon.directory + "/missing.sock"
        let result = try cli.run(as: Self.a, ["--daemon", "list"], environment: ["KEYGATE_SOCKET": missing])
        #expect(result.status == 1 && result.lastErrorLine.contains(missing), "\(result.stderr)")
    }

    @Test func statusInBothModes() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        let cli = CLIFixture(daemon: daemon)
        let viaDaemon = try cli.run(as: Self.a, ["status"])
        #expect(viaDaemon.status == 0, "\(viaDaemon.stderr)")
        let lines = viaDaemon.lines
        #expect(lines.count == 6, "\(viaDaemon.stdout)")
        guard lines.count == 6 else { return }
        #expect(lines[0] == "mode:        daemon (a socket is at \(daemon.socket))")
        #expect(lines[1] == "socket:      \(daemon.socket)")
        #expect(lines[2] == "store:       daemon-managed")
        #expect(lines[3] == "audit trail: daemon-managed (keygate audit show, keygate audit verify)")
        #expect(lines[4].hasPrefix("daemon:      keygated "))
        let executable = URL(fileURLWithPath: CLIFixture.keygatePath).resolvingSymlinksInPath().path
        #expect(lines[5].hasPrefix("caller:      uid \(Self.a), gid \(Self.a), pid "))
        #expect(lines[5].hasSuffix(", executable \(executable)"))

        let embedded = try cli.run(as: Self.a, ["--embedded", "status"])
        let home = cli.home(Self.a)
        // The pam line depends on this machine's /etc/pam.d (ProveCommandTests checks it).
        #expect(embedded.lines.count == 4 && embedded.lines[1].hasPrefix("pam:         "), "\(embedded.stdout)")
        #expect(
            embedded.lines.enumerated().filter { $0.offset != 1 }.map(\.element) == [
                "mode:        embedded (--embedded)", "store:       \(home)/data/keygate/items.db",
                "audit trail: \(home)/data/keygate/audit.jsonl",
            ], "\(embedded.stdout)\(embedded.stderr)")
    }

    @Test func embeddedOnlyOptionsAreUsageErrorsInDaemonMode() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        let cli = CLIFixture(daemon: daemon)
        for words in [
            ["--store", "/tmp/x.db"], ["--audit", "/tmp/a.jsonl"], ["--policies", "/tmp"],
            ["--device-state", "unlocked"], ["--pam-service", "keygate-other"],
        ] {
            let result = try cli.run(as: Self.a, words + ["get", "-s", "api", "-a", "me"])
            #expect(result.status == 2, "\(words)")
            #expect(result.lastErrorLine.hasPrefix("keygate: \(words[0]) only applies to the embedded store"))
        }
        // What the daemon does not serve is refused, exit 1, and nothing is written.
        for words in [
            ["export", "--to", cli.home(Self.a) + "/backup"], ["import", "/dev/null"], ["audit", "repair"],
        ] {
            let result = try cli.run(as: Self.a, words)
            #expect(result.status == 1, "\(words): \(result.stderr)")
            #expect(result.lastErrorLine.contains("works on the embedded store only"), "\(result.stderr)")
        }
        #expect(access(cli.home(Self.a) + "/backup", F_OK) != 0)
    }

    /// The same commands give the same output and exit codes through the daemon and embedded.
    @Test(arguments: ["--daemon", "--embedded"])
    func itemCommandsAndHelpersKeepTheirExitCodes(mode: String) throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        let cli = CLIFixture(daemon: daemon)
        func run(_ words: [String], stdin: String = "") throws -> CLIFixture.Result {
            try cli.run(as: Self.a, [mode] + words, stdin: stdin)
        }
        #expect(try run(["add", "-s", "api", "-a", "me", "--label", "L"], stdin: "v1").status == 0)
        #expect(try run(["add", "-s", "api", "-a", "me"], stdin: "again").status == 4)
        #expect(try run(["get", "-s", "api", "-a", "me"]).stdout == "v1")
        #expect(try run(["get", "-s", "api", "-a", "nobody"]).status == 3)
        #expect(try run(["update", "-s", "api", "-a", "me"], stdin: "v2").status == 0)
        #expect(try run(["get", "-s", "api", "-a", "me"]).stdout == "v2")
        #expect(try run(["update", "-s", "api", "-a", "nobody"], stdin: "x").status == 3)
        let list = try run(["list"])
        #expect(list.status == 0 && list.lines.count == 1 && list.stdout.contains(#""service": "api""#))
        #expect(try run(["add", "-s", "bad", "-a", "me", "--access-control", "nonsense"], stdin: "x").status == 8)
        #expect(try run(["delete", "-s", "api", "-a", "me"]).status == 0)
        #expect(try run(["delete", "-s", "api", "-a", "me"]).status == 3)
        #expect(try run(["list"]).stdout.isEmpty)
        // git's helper: store, get, erase.
        let credential = "protocol=https\nhost=example.com\nusername=me\npassword=hunter2\n\n"
        #expect(try run(["credential", "store"], stdin: credential).status == 0)
        let got = try run(["credential", "get"], stdin: "protocol=https\nhost=example.com\n\n")
        #expect(got.status == 0 && got.stdout.contains("password=hunter2\n"), "\(got.stdout)\(got.stderr)")
        #expect(try run(["credential", "erase"], stdin: credential).status == 0)
        #expect(try run(["credential", "get"], stdin: "protocol=https\nhost=example.com\n\n").stdout.isEmpty)
        // docker's helper.
        let stored = try run(
            ["docker-credential", "store"], stdin: #"{"ServerURL":"registry.example","Username":"me","Secret":"tok"}"#)
        #expect(stored.status == 0, "\(stored.stderr)")
        let docker = try run(["docker-credential", "get"], stdin: "registry.example")
        #expect(docker.status == 0 && docker.stdout.contains(#""Secret":"tok""#), "\(docker.stdout)\(docker.stderr)")
    }
}

/// File-type checks the CLI tests need.
enum DaemonFixtureSocket {
    /// Whether `path` is a socket.
    static func isSocket(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK
    }
}
