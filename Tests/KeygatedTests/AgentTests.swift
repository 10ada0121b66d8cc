import Foundation
import Glibc
import Testing

/// Issue 30: authentication agents. A requester that cannot be asked (its hello says so: a job
/// without a terminal) has its proof asked of its session's agent, `keygate --daemon agent`,
/// registered over the daemon's socket; the daemon routes by the requester's uid and session as
/// the kernel reports them, and shows the agent what it knows of the request itself. The
/// requesters and agents here run outside any login session, so the agent is its uid's agent
/// for requests outside a session.
@Suite(.serialized) struct AgentTests {
    let a = DaemonFixture.userA
    let b = DaemonFixture.userB

    /// `keygate --daemon agent --passphrase-fd 3` as `uid`, fd 3 reading `answers` (a file of one
    /// line a question, or with `blocking` a FIFO no one writes: a question waits forever), once
    /// it says it is ready.
    static func agent(
        _ world: RelayFixture, as uid: UInt32, answers: String = "", blocking: Bool = false,
        in session: AuditSession? = nil
    ) throws -> RelayFixture.Background {
        let input = world.daemon.directory + "/answers-\(UUID().uuidString)"
        if blocking {
            #expect(mkfifo(input, 0o666) == 0)
        } else {
            try answers.write(toFile: input, atomically: true, encoding: .utf8)
        }
        chmod(input, 0o666)
        let output = world.daemon.directory + "/agent-\(UUID().uuidString).out"
        let agent = ["/bin/sh", "-c", "exec \(CLIFixture.keygatePath) --daemon agent --passphrase-fd 3 3<>'\(input)'"]
        let process = try DaemonFixture.launch(
            session == nil ? "/usr/bin/setpriv" : "/bin/sh",
            session?.command(as: uid, agent) ?? ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups"] + agent,
            output: output, environment: ["PATH": "/usr/bin:/bin", "KEYGATE_SOCKET": world.daemon.socket])
        return RelayFixture.Background(process: process, outputPath: output)
    }

    static func ready(_ agent: RelayFixture.Background) -> Bool { agent.wait(for: "keygate agent: ready") }

    /// A request that cannot ask, as `uid` (with `prompt` as its own operation prompt): its
    /// output and status.
    static func unasked(_ world: RelayFixture, as uid: UInt32, prompt: String? = nil) throws -> DaemonFixture.Result {
        try world.daemon.run(
            as: uid, DaemonFixture.probePath,
            [world.daemon.socket, "unasked", "gated", "me"] + (prompt.map { [$0] } ?? []))
    }

    /// A request that cannot ask, as `uid`, running in the background.
    static func unaskedInBackground(_ daemon: DaemonFixture, as uid: UInt32) throws -> RelayFixture.Background {
        let output = daemon.directory + "/unasked-\(UUID().uuidString).out"
        let process = try DaemonFixture.launch(
            "/usr/bin/setpriv",
            [
                "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", DaemonFixture.probePath, daemon.socket,
                "unasked", "gated", "me",
            ],
            output: output)
        return RelayFixture.Background(process: process, outputPath: output)
    }

    @Test func theRightPassphraseFromTheAgentReadsTheValue() throws {
        let world = try RelayFixture()
        try world.daemon.start()
        try world.addGated(as: a, "gated", "me", "the-value")
        let agent = try Self.agent(world, as: a, answers: "pass-a\n")
        #expect(Self.ready(agent), "\(agent.output)")
        let read = try Self.unasked(world, as: a, prompt: "Approve the quarterly report (FORGED)")
        #expect(read.lines == ["the-value"], "\(read.output)")
        // What the agent showed is the daemon's own view: the operation and item, the probe's
        // executable and a pid (the requester's, never a value it sent); the prompt the
        // requester chose is not shown.
        #expect(!agent.output.contains("FORGED"), "\(agent.output)")
        let probe = URL(fileURLWithPath: DaemonFixture.probePath).resolvingSymlinksInPath().path
        #expect(agent.output.contains("keygate agent: \(probe) (pid "), "\(agent.output)")
        #expect(agent.output.contains("asks for read of gated/me@probe.group"), "\(agent.output)")
        #expect(!agent.output.contains("pass-a"))
        #expect(!world.daemon.log.contains("pass-a"))
        // The attempt's record names the requester (its caller), the item and the agent asked.
        let records = try AuditTrailTests.records(try world.daemon.probe(as: a, "audit-show", "0"))
        let attempt = try #require(records.last { $0.op == "authenticate" }, "\(records.map(\.fields))")
        #expect(attempt.decision == "proved")
        #expect(attempt.service == "gated" && attempt.account == "me")
        #expect(attempt.callerUID == Int(a))
        let keygate = URL(fileURLWithPath: CLIFixture.keygatePath).resolvingSymlinksInPath().path
        let reasons = attempt.fields["reasons"] as? [String] ?? []
        #expect(
            reasons.contains { $0.hasPrefix("askedAgent: pid ") && $0.hasSuffix(" \(keygate)") }, "\(attempt.fields)")
    }

    @Test func aWrongPassphraseIsAuthFailedAndACancelIsUserCanceled() throws {
        let world = try RelayFixture()
        try world.daemon.start()
        try world.addGated(as: a, "gated", "me", "the-value")
        do {
            let agent = try Self.agent(world, as: a, answers: "wrong\n")
            #expect(Self.ready(agent), "\(agent.output)")
            let read = try Self.unasked(world, as: a)
            #expect(read.lines.last?.hasPrefix("error -25293") == true, "\(read.output)")
            kill(agent.process.processIdentifier, SIGKILL)
            _ = agent.finish()
        }
        // No line to give: the agent cancels.
        let agent = try Self.agent(world, as: a, answers: "")
        #expect(Self.ready(agent), "\(agent.output)")
        let read = try Self.unasked(world, as: a)
        #expect(read.lines.last?.hasPrefix("error -128") == true, "\(read.output)")
    }

    @Test func withNoAgentTheRequestIsNotAllowedAtOnce() throws {
        let world = try RelayFixture(config: "prompt-timeout = 30\n")
        try world.daemon.start()
        try world.addGated(as: a, "gated", "me", "the-value")
        let started = Date()
        let read = try Self.unasked(world, as: a)
        #expect(read.lines.last?.hasPrefix("error -25308") == true, "\(read.output)")
        #expect(read.lines.last?.hasSuffix("[cause noAgent]") == true, "\(read.output)")
        #expect(Date().timeIntervalSince(started) < 10, "at once, not at the prompt timeout")
        // The attempt's record says no agent was there.
        let records = try AuditTrailTests.records(try world.daemon.probe(as: a, "audit-show", "0"))
        let attempt = try #require(records.last { $0.op == "authenticate" }, "\(records.map(\.fields))")
        #expect(attempt.decision == "notAllowed")
        let reasons = attempt.fields["reasons"] as? [String] ?? []
        #expect(reasons.contains { $0.contains("no authentication agent is registered") }, "\(attempt.fields)")
    }

    @Test func aSecondAgentIsRefusedWhileTheFirstRuns() throws {
        let world = try RelayFixture()
        try world.daemon.start()
        let first = try Self.agent(world, as: a)
        #expect(Self.ready(first), "\(first.output)")
        let second = try Self.agent(world, as: a)
        #expect(second.finish() == 4, "\(second.output)")
        #expect(second.output.contains("already registered"), "\(second.output)")
        // Once the first is gone, another may register.
        kill(first.process.processIdentifier, SIGKILL)
        _ = first.finish()
        var third = try Self.agent(world, as: a)
        let deadline = Date().addingTimeInterval(10)
        while !Self.ready(third) && Date() < deadline {
            _ = third.finish()
            third = try Self.agent(world, as: a)
        }
        #expect(third.output.contains("keygate agent: ready"), "\(third.output)")
    }

    @Test func anAgentKilledAtThePromptCancelsTheRequest() throws {
        let world = try RelayFixture(config: "prompt-timeout = 30\n")
        try world.daemon.start()
        try world.addGated(as: a, "gated", "me", "the-value")
        let agent = try Self.agent(world, as: a, blocking: true)
        #expect(Self.ready(agent), "\(agent.output)")
        let requester = try Self.unaskedInBackground(world.daemon, as: a)
        #expect(agent.wait(for: "asks for read of gated/me"), "\(agent.output)")
        let started = Date()
        kill(agent.process.processIdentifier, SIGKILL)
        #expect(requester.finish() == 1)
        #expect(requester.output.hasPrefix("error -128"), "\(requester.output)")
        #expect(Date().timeIntervalSince(started) < 10, "freed at once, not at the prompt timeout")
        #expect(world.daemon.isRunning)
    }

    @Test func anotherUidsRequestNeverReachesTheAgent() throws {
        let world = try RelayFixture()
        try world.daemon.start()
        try world.addGated(as: b, "gated", "me", "b-value")
        let agent = try Self.agent(world, as: a, answers: "pass-b\npass-b\n")
        #expect(Self.ready(agent), "\(agent.output)")
        let read = try Self.unasked(world, as: b)
        #expect(read.lines.last?.hasPrefix("error -25308") == true, "\(read.output)")
        #expect(!agent.output.contains("asks for"), "\(agent.output)")
    }

    /// An agent registered from a login session answers that session's requests only: a
    /// request of another session of the same uid, or from outside any session, finds no agent.
    @Test func anAgentAnswersItsOwnSessionOnly() throws {
        let world = try RelayFixture()
        try world.daemon.start()
        try world.addGated(as: a, "gated", "me", "the-value")
        let session = try AuditSession()
        let other = try AuditSession()
        let agent = try Self.agent(world, as: a, answers: "pass-a\n", in: session)
        #expect(Self.ready(agent), "\(agent.output)")
        let elsewhere = try other.probe(world.daemon, as: a, "unasked", "gated", "me").result
        #expect(elsewhere.lines.last?.hasSuffix("[cause noAgent]") == true, "\(elsewhere.output)")
        let outside = try Self.unasked(world, as: a)
        #expect(outside.lines.last?.hasSuffix("[cause noAgent]") == true, "\(outside.output)")
        let inside = try session.probe(world.daemon, as: a, "unasked", "gated", "me").result
        #expect(inside.lines == ["the-value"], "\(inside.output)")
        #expect(
            world.daemon.log.contains("authentication agent registered for session \(session.id)"),
            "\(world.daemon.log)")
        kill(agent.process.processIdentifier, SIGKILL)
        _ = agent.finish()
    }

    /// On a terminal the agent shows who asks and for what, then asks with hidden input: what is
    /// typed is never shown, and the request it answers gets the value.
    @Test func onATerminalTheAgentShowsWhoAsksAndHidesTheAnswer() throws {
        let cli = try CLIPromptTests.world()
        #expect(try cli.daemon.probe(as: a, "add", "gated", "me", "the-value", "presence").lines == ["ok"])
        let terminal = try CLITerminal(cli, as: a, ["--daemon", "agent"])
        let registered = Date().addingTimeInterval(10)
        while !cli.daemon.log.contains("authentication agent registered") && Date() < registered { usleep(20_000) }
        let requester = try Self.unaskedInBackground(cli.daemon, as: a)
        #expect(terminal.wait(for: "asks for read of gated/me"), "\(terminal.screen)")
        #expect(terminal.wait(for: "assword"), "\(terminal.screen)")
        terminal.type(Array("pass-a\r".utf8))
        #expect(requester.finish() == 0, "\(requester.output)")
        #expect(requester.output == "the-value\n")
        #expect(!terminal.screen.contains("pass-a"), "the answer was echoed: \(terminal.screen)")
        // The agent runs until killed: its pid, as the daemon logged it.
        let line = cli.daemon.log.split(separator: "\n").first { $0.contains("authentication agent registered") }
        if let pid = line?.split(separator: " ").firstIndex(of: "pid").flatMap({ index in
            line.flatMap { Int32($0.split(separator: " ")[index + 1].dropLast()) }
        }) {
            kill(pid, SIGKILL)
        }
        #expect(terminal.finish(timeout: 10) != nil, "the agent did not end when killed")
    }

    /// An agent that breaks the protocol at a question (a request in place of an answer, bytes
    /// that are no frame, a frame too large) gets an error frame and is closed; the request it
    /// was asked for ends as cancelled at once, the daemon keeps serving, and another agent may
    /// register. An answer under an id no question has is dropped, never given to a request.
    @Test(arguments: ["intrude", "garbage", "oversized", "stray"])
    func anAgentThatBreaksTheProtocolIsClosedAndItsRequestCancelled(kind: String) throws {
        let world = try RelayFixture(config: "prompt-timeout = 30\n")
        try world.daemon.start()
        try world.addGated(as: a, "gated", "me", "the-value")
        let output = world.daemon.directory + "/bad-agent-\(kind).out"
        let agent = RelayFixture.Background(
            process: try DaemonFixture.launch(
                "/usr/bin/setpriv",
                [
                    "--reuid=\(a)", "--regid=\(a)", "--clear-groups", DaemonFixture.probePath, world.daemon.socket,
                    "bad-agent", kind,
                ],
                output: output),
            outputPath: output)
        #expect(agent.wait(for: "registered"), "\(agent.output)")
        let started = Date()
        let read = try Self.unasked(world, as: a)
        #expect(read.lines.last?.hasPrefix("error -128") == true, "\(kind): \(read.output)")
        #expect(Date().timeIntervalSince(started) < 10, "\(kind): freed at once, not at the prompt timeout")
        #expect(!world.daemon.log.contains("stray-answer"))
        if kind == "stray" {
            #expect(agent.output.contains("cancelled"), "\(agent.output)")
            kill(agent.process.processIdentifier, SIGKILL)
        } else {
            #expect(agent.wait(for: "closed"), "\(kind): the daemon kept a broken agent: \(agent.output)")
            let expected = kind == "intrude" ? "error -909" : "error -50"
            #expect(agent.output.contains(expected), "\(kind): \(agent.output)")
        }
        _ = agent.finish()
        #expect(world.daemon.isRunning, "keygated died: \(world.daemon.log)")
        // The daemon drops the broken agent when its connection ends: soon, not necessarily yet.
        var next = try Self.agent(world, as: a, answers: "pass-a\n")
        let deadline = Date().addingTimeInterval(10)
        while !Self.ready(next) && Date() < deadline {
            _ = next.finish()
            next = try Self.agent(world, as: a, answers: "pass-a\n")
        }
        #expect(Self.ready(next), "\(kind): no agent could register after the broken one: \(next.output)")
        #expect(try Self.unasked(world, as: a).lines == ["the-value"])
        kill(next.process.processIdentifier, SIGKILL)
        _ = next.finish()
    }
}
