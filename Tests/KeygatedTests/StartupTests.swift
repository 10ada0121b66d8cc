import Foundation
import Glibc
import Keygate
import KeygateProtocol
import Testing

/// The pinned command line and configuration file, and durability across a crash.
@Suite struct StartupTests {
    func startFails(_ config: String, mode: mode_t = 0o644) throws -> DaemonFixture.Result {
        let daemon = try DaemonFixture(config: config)
        chmod(daemon.configPath!, mode)
        let output = daemon.directory + "/refused.log"
        let process = try DaemonFixture.launch(
            DaemonFixture.daemonPath,
            ["--socket", daemon.socket, "--state-directory", daemon.state, "--config", daemon.configPath!],
            output: output)
        process.waitUntilExit()
        #expect(access(daemon.socket, F_OK) != 0, "a refused start left a socket")
        return DaemonFixture.Result(
            status: process.terminationStatus, output: (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }

    @Test func aBadValueRefusesToStartNamingFileLineAndKey() throws {
        let result = try startFails("# comment\n\ndevice-state = maybe\n")
        #expect(result.status == 78)
        #expect(result.output.contains("keygated.conf:3: device-state: 'maybe' is not one of logind, unlocked, locked"))
    }

    @Test func anUnknownKeyRefusesToStartNamingTheLine() throws {
        let result = try startFails("device-state = unlocked\nunlock-everything = yes\n")
        #expect(result.status == 78)
        #expect(result.output.contains("keygated.conf:2: unknown key 'unlock-everything'"))
    }

    @Test func aLineWithoutEqualsOrARepeatedKeyRefusesToStart() throws {
        #expect(try startFails("idle-timeout 5\n").output.contains("keygated.conf:1: expected 'key = value'"))
        #expect(
            try startFails("idle-timeout = 5\nidle-timeout = 6\n").output.contains(
                "keygated.conf:2: idle-timeout: given twice"))
        #expect(try startFails("idle-timeout = 0\n").output.contains("keygated.conf:1: idle-timeout: '0'"))
        #expect(try startFails("enrollment-file = relative\n").output.contains("keygated.conf:1: enrollment-file"))
    }

    @Test func aConfigurationOthersCanWriteRefusesToStart() throws {
        let result = try startFails("device-state = unlocked\n", mode: 0o666)
        #expect(result.status == 78)
        #expect(result.output.contains("not be writable by group or others"))
    }

    /// `--version` and `--help` answer and exit 0, as a Linux tool's do; the version is the package's.
    @Test func versionAndHelpAnswerAndExitZero() throws {
        try DaemonFixture.requireRoot()
        let output = "/tmp/keygated-version-\(getpid()).log"
        defer { unlink(output) }
        for (arguments, expected) in [
            (["--version"], "keygated \(KeygateVersion.current) (protocol 4)"),
            (["-V"], "keygated \(KeygateVersion.current)"),
            (["--help"], "usage: keygated --socket PATH"), (["-h"], "See keygated(8)."),
        ] {
            let process = try DaemonFixture.launch(DaemonFixture.daemonPath, arguments, output: output)
            process.waitUntilExit()
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            #expect(process.terminationStatus == 0, "\(arguments): \(text)")
            #expect(text.contains(expected), "\(arguments): \(text)")
        }
    }

    /// SIGTERM (and SIGINT) stop the daemon within a second, even with a connection open and a
    /// prompt-less client idle on it; the socket the daemon made is removed, and the log says so.
    @Test func sigtermStopsWithinASecondAndRemovesTheSocket() throws {
        for signal in [SIGTERM, SIGINT] {
            let daemon = try DaemonFixture()
            try daemon.start()
            let idle = try daemon.connect()
            try idle.greet()
            let process = try #require(daemon.process)
            let started = Date()
            kill(process.processIdentifier, signal)
            while process.isRunning && Date().timeIntervalSince(started) < 5 { usleep(5_000) }
            let elapsed = Date().timeIntervalSince(started)
            #expect(!process.isRunning && elapsed < 1, "signal \(signal): still running after \(elapsed) s")
            process.waitUntilExit()
            #expect(process.terminationReason == .exit && process.terminationStatus == 0)
            #expect(access(daemon.socket, F_OK) != 0, "the socket is still there")
            let name = signal == SIGTERM ? "SIGTERM" : "SIGINT"
            #expect(daemon.log.contains("stopping on \(name); removed \(daemon.socket)"), "\(daemon.log)")
            #expect(idle.closedByPeer(within: 2))
        }
    }

    /// A socket that is not the daemon's own any more (another daemon's, made at the path after it
    /// started) is left alone at the stop.
    @Test func aStopLeavesASocketFileThatIsNotItsOwn() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        unlink(daemon.socket)
        let other = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(other) }
        let bound = UnixSocketAddress(path: daemon.socket)?.bind(other) ?? -1
        try #require(bound == 0)
        daemon.stop()
        #expect(access(daemon.socket, F_OK) == 0, "the daemon removed a socket it did not make")
        #expect(daemon.log.contains("stopping on SIGTERM") && !daemon.log.contains("removed"), "\(daemon.log)")
    }

    @Test func badArgumentsAreAUsageError() throws {
        try DaemonFixture.requireRoot()
        let output = "/tmp/keygated-usage-\(getpid()).log"
        defer { unlink(output) }
        for arguments in [
            ["--socket", "/tmp/x.sock"], ["--socket", "relative", "--state-directory", "/tmp/s"], ["-v"],
        ] {
            let process = try DaemonFixture.launch(DaemonFixture.daemonPath, arguments, output: output)
            process.waitUntilExit()
            #expect(process.terminationStatus == 64, "\(arguments)")
        }
    }

    @Test func aFileAtTheSocketPathIsNeverReplacedAndARunningDaemonIsNotStolenFrom() throws {
        let daemon = try DaemonFixture()
        try "not a socket".write(toFile: daemon.socket, atomically: false, encoding: .utf8)
        let output = daemon.directory + "/second.log"
        let arguments = ["--socket", daemon.socket, "--state-directory", daemon.state]
        let refused = try DaemonFixture.launch(DaemonFixture.daemonPath, arguments, output: output)
        refused.waitUntilExit()
        #expect(refused.terminationStatus == 78)
        #expect(try String(contentsOfFile: daemon.socket, encoding: .utf8) == "not a socket")
        unlink(daemon.socket)
        try daemon.start()
        let second = try DaemonFixture.launch(DaemonFixture.daemonPath, arguments, output: output)
        second.waitUntilExit()
        #expect(second.terminationStatus == 78)
        #expect(try String(contentsOfFile: output, encoding: .utf8).contains("another daemon is listening"))
        #expect(try daemon.probe(as: DaemonFixture.userA, "status").lines.first?.hasPrefix("mode=daemon") == true)
        // A stale socket (its daemon killed) is replaced.
        daemon.stop(signal: SIGKILL)
        try daemon.start(keepingSocket: true)
        #expect(try daemon.probe(as: DaemonFixture.userA, "status").lines.first?.hasPrefix("mode=daemon") == true)
    }

    @Test func killNineOfTheDaemonLosesNoAcknowledgedAdd() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        let output = daemon.directory + "/adds.out"
        let adder = try DaemonFixture.launch(
            "/usr/bin/setpriv",
            [
                "--reuid=\(DaemonFixture.userA)", "--regid=\(DaemonFixture.userA)", "--clear-groups",
                DaemonFixture.probePath, daemon.socket, "add-many", "crash", "100000",
            ], output: output)
        let deadline = Date().addingTimeInterval(20)
        func acked() -> [String] {
            ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: "\n")
                .filter { $0.hasPrefix("acked ") }.map(String.init)
        }
        while acked().count < 40 && Date() < deadline { usleep(2_000) }
        daemon.stop(signal: SIGKILL)
        adder.waitUntilExit()
        let acknowledged = acked().count
        #expect(acknowledged >= 40)
        try daemon.start()
        let count = try daemon.probe(as: DaemonFixture.userA, "count")
        let stored = Int(count.lines.first ?? "") ?? -1
        // Every acknowledged add is there; at most the one in flight at the kill is extra.
        #expect(stored >= acknowledged && stored <= acknowledged + 1, "acked \(acknowledged), stored \(stored)")
        #expect(
            try daemon.probe(as: DaemonFixture.userA, "get", "crash", "\(acknowledged - 1)").lines == [
                "v\(acknowledged - 1)"
            ])
    }
}

/// The configuration file shipped in Packaging/ is accepted as it is.
@Suite struct ShippedConfigurationTests {
    @Test func theShippedConfigurationStartsTheDaemon() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("Packaging/keygated.conf"), encoding: .utf8)
        #expect(text.contains("#device-state = logind"))
        let daemon = try DaemonFixture(config: text)
        try daemon.start()
        #expect(try daemon.probe(as: DaemonFixture.userA, "add", "svc", "acc", "v").lines == ["ok"])
        // Every commented default is a key the daemon knows: uncommented, they start it too.
        let uncommented = text.split(separator: "\n").filter {
            $0.hasPrefix("#") && $0.dropFirst().first?.isLowercase == true
        }
        .map { $0.dropFirst() }.joined(separator: "\n")
        .replacingOccurrences(of: "enrollment-file = /etc/keygate/enrollment", with: "enrollment-file = /nonexistent")
        // A policies path must exist (a missing one stops the daemon): an empty root-owned one.
        let policies = "/tmp/keygated-shipped-policies-\(getpid())"
        #expect(mkdir(policies, 0o755) == 0 || errno == EEXIST)
        defer { rmdir(policies) }
        let all = try DaemonFixture(
            config: uncommented.replacingOccurrences(
                of: "policies = /etc/keygate/policies", with: "policies = \(policies)"))
        try all.start()
        #expect(try all.probe(as: DaemonFixture.userA, "status").lines.first?.hasPrefix("mode=daemon") == true)
    }
}
