import Foundation
import Glibc
import KeygateClient
import KeygatePolicy
import Testing

@testable import keygated

/// `keygate --daemon ssh-agent` (issue 31, point 6): each accepted connection is handed to
/// `keygated` (SCM_RIGHTS), which serves the agent protocol with the keys it holds, for the
/// program the kernel names as the connection's peer, and asks each proof of the session's
/// `keygate agent`. Clients run as unprivileged uids; the daemon as root, with PAM.
@Suite(.serialized) struct BrokerSSHAgentTests {
    static let a = DaemonFixture.userA
    /// `Tests/Scripts/ssh-agent-fork-writer.py`.
    static let forkWriter =
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().path
        + "/Scripts/ssh-agent-fork-writer.py"
    static let b = DaemonFixture.userB

    /// A daemon with PAM, uid A's passcode key made through it, and A's `keygate --daemon
    /// ssh-agent` listening in A's home.
    struct World {
        let relay: RelayFixture
        let cli: CLIFixture
        let agent: RelayFixture.Background
        let socket: String
        let home: String
    }

    /// `options` are the agent's global options (`--reuse-seconds 60`).
    static func world(_ key: [String], options: [String] = []) throws -> World {
        let relay = try RelayFixture()
        try relay.daemon.start()
        let cli = CLIFixture(daemon: relay.daemon, owner: relay)
        let made = try cli.run(as: a, ["--daemon", "key", "create", "--label", "deploy"] + key)
        try #require(made.status == 0, "\(made.stderr)")
        let home = cli.home(a)
        let socket = home + "/agent.sock"
        let output = relay.daemon.directory + "/ssh-agent-\(UUID().uuidString).out"
        let agent = try DaemonFixture.launch(
            "/usr/bin/setpriv",
            [
                "--reuid=\(a)", "--regid=\(a)", "--clear-groups", CLIFixture.keygatePath, "--daemon",
            ] + options + ["ssh-agent", "-a", socket], output: output,
            environment: cli.environment(a).merging(["PATH": "/usr/bin:/bin"]) { $1 })
        let background = RelayFixture.Background(process: agent, outputPath: output)
        try #require(background.wait(for: "keygate ssh-agent: listening on"), "\(background.output)")
        return World(relay: relay, cli: cli, agent: background, socket: socket, home: home)
    }

    /// `ssh-keygen -Y sign` as `uid` through the agent at `socket`: its status, output, and
    /// the signature file it wrote (in `home`).
    /// OpenSSH's tools look their user up: a passwd naming the test uids, for nss_wrapper, in
    /// a place those uids can read.
    static func users(_ world: World) throws -> [String] {
        let passwd = world.home + "/passwd"
        let group = world.home + "/group"
        if access(passwd, F_OK) != 0 {
            var users = "root:x:0:0:root:/root:/bin/sh\n"
            var groups = "root:x:0:\n"
            for uid in [a, b] {
                users += "user\(uid):x:\(uid):\(uid):test:\(world.home):/bin/sh\n"
                groups += "user\(uid):x:\(uid):\n"
            }
            try users.write(toFile: passwd, atomically: true, encoding: .utf8)
            try groups.write(toFile: group, atomically: true, encoding: .utf8)
            chmod(passwd, 0o644)
            chmod(group, 0o644)
        }
        return ["LD_PRELOAD=libnss_wrapper.so", "NSS_WRAPPER_PASSWD=\(passwd)", "NSS_WRAPPER_GROUP=\(group)"]
    }

    /// The public key file and a fresh message file for `ssh-keygen -Y sign`, both A's.
    static func signingFiles(_ world: World) throws -> (publicKey: String, message: String) {
        let line = try world.cli.run(as: a, ["--daemon", "key", "public", "--label", "deploy"]).stdout
        let publicKey = world.home + "/deploy.pub"
        let message = world.home + "/message-\(UUID().uuidString)"
        try line.write(toFile: publicKey, atomically: true, encoding: .utf8)
        try "signed in the daemon\n".write(toFile: message, atomically: true, encoding: .utf8)
        for path in [publicKey, message] { chown(path, a, a) }
        return (publicKey, message)
    }

    static func sign(_ world: World, as uid: UInt32 = a) throws -> (DaemonFixture.Result, String) {
        let (publicKey, message) = try signingFiles(world)
        let signed = try world.relay.daemon.run(
            as: uid, "/usr/bin/env",
            try users(world) + [
                "SSH_AUTH_SOCK=\(world.socket)", "/usr/bin/ssh-keygen", "-Y", "sign", "-n", "file", "-f", publicKey,
                message,
            ])
        return (signed, message)
    }

    /// A passcode key held by the daemon signs only after the session's agent proves the
    /// passcode: the question names `ssh-keygen` and its pid; `ssh-keygen -Y verify` accepts
    /// the signature; the daemon's record names ssh-keygen as the caller and the key.
    @Test func theDaemonSignsForTheRealRequesterAfterTheAgentsProof() throws {
        let world = try Self.world(["--type", "ed25519", "--access-control", "devicePasscode"])
        let agent = try AgentTests.agent(world.relay, as: Self.a, answers: RelayFixture.passwords[Self.a]! + "\n")
        try #require(AgentTests.ready(agent), "\(agent.output)")
        let (signed, message) = try Self.sign(world)
        #expect(signed.status == 0, "\(signed.output)\n\(world.agent.output)\n\(world.relay.daemon.log)")
        let line = try world.cli.run(as: Self.a, ["--daemon", "key", "public", "--label", "deploy"]).stdout
        let allowed = world.home + "/allowed"
        try "me \(line)".write(toFile: allowed, atomically: true, encoding: .utf8)
        let verified = try DaemonFixture.launchAndWait(
            "/bin/sh",
            ["-c", "/usr/bin/ssh-keygen -Y verify -f '\(allowed)' -I me -n file -s '\(message).sig' < '\(message)'"])
        #expect(verified.contains("Good \"file\" signature"), "\(verified)")
        #expect(agent.output.contains("/usr/bin/ssh-keygen (pid "), "\(agent.output)")
        let trail = try world.cli.run(as: Self.a, ["--daemon", "audit", "show"]).stdout
        #expect(trail.contains("\"exe\": \"/usr/bin/ssh-keygen\""), "\(trail)")
        #expect(trail.contains("\"op\": \"sign\""), "\(trail)")
    }

    /// With no authentication agent for the session, a key that needs a proof is refused at
    /// once (the agent protocol's failure, never a hang); the key stays.
    @Test func withNoAuthenticationAgentTheSignatureIsRefusedAtOnce() throws {
        let world = try Self.world(["--type", "p256", "--access-control", "devicePasscode"])
        let started = Date()
        let (signed, message) = try Self.sign(world)
        #expect(signed.status != 0)
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(access(message + ".sig", F_OK) != 0)
        #expect(try world.cli.run(as: Self.a, ["--daemon", "key", "list"]).lines.count == 1)
    }

    /// Another uid that reaches A's agent socket is not served A's keys: the daemon refuses a
    /// connection whose peer is not the passer's uid.
    @Test func anotherUidsConnectionIsRefusedByTheDaemon() throws {
        let world = try Self.world(["--type", "ed25519"])
        chmod(world.home, 0o755)
        chmod(world.socket, 0o666)
        let listed = try world.relay.daemon.run(
            as: Self.b, "/usr/bin/env",
            try Self.users(world) + ["SSH_AUTH_SOCK=\(world.socket)", "/usr/bin/ssh-add", "-L"])
        #expect(!listed.output.contains("ssh-ed25519"), "\(listed.output)")
        #expect(world.relay.daemon.log.contains("SSH agent connection refused"), "\(world.relay.daemon.log)")
        // A's own programs still are.
        let own = try world.relay.daemon.run(
            as: Self.a, "/usr/bin/env",
            try Self.users(world) + ["SSH_AUTH_SOCK=\(world.socket)", "/usr/bin/ssh-add", "-L"])
        #expect(own.output.contains("ssh-ed25519"), "\(own.output)")
    }

    /// With `--reuse-seconds 60`, the proof made for one signature stands for the next one from
    /// the same login session and terminal (the daemon's proof cache, as for the Keygate
    /// socket): two `ssh-keygen -Y sign` on one terminal ask the session's agent once, and the
    /// second record says the proof was reused; a signature from another terminal is asked again.
    @Test func aProofStandsForTheNextSignatureFromTheSameTerminalOnly() throws {
        let world = try Self.world(
            ["--type", "ed25519", "--access-control", "devicePasscode"], options: ["--reuse-seconds", "60"])
        let session = try AuditSession()
        let agent = try AgentTests.agent(
            world.relay, as: Self.a, answers: RelayFixture.passwords[Self.a]! + "\n", in: session)
        try #require(AgentTests.ready(agent), "\(agent.output)")
        let (publicKey, first) = try Self.signingFiles(world)
        let second = first + "-again"
        try "another message\n".write(toFile: second, atomically: true, encoding: .utf8)
        chown(second, Self.a, Self.a)
        let environment = try Self.users(world).joined(separator: " ") + " SSH_AUTH_SOCK='\(world.socket)'"
        let sign = "env \(environment) /usr/bin/ssh-keygen -Y sign -n file -f '\(publicKey)'"
        let script = "\(sign) '\(first)'; echo \" rc=$?\"; \(sign) '\(second)'; echo \" rc=$?\""
        let terminal = try CLITerminal(world.cli, as: Self.a, [], script: script, session: session.id)
        let result = try #require(terminal.finish(), "the signatures did not finish")
        #expect(result.stdout.components(separatedBy: " rc=0").count == 3, "\(result.stdout)\(result.stderr)")
        #expect(access(first + ".sig", F_OK) == 0 && access(second + ".sig", F_OK) == 0)
        #expect(agent.output.components(separatedBy: "/usr/bin/ssh-keygen (pid ").count == 2, "\(agent.output)")
        let trail = try world.cli.run(as: Self.a, ["--daemon", "audit", "show"]).stdout
        #expect(
            trail.contains("the passcode proof of an earlier request, reused within this request's 60 s window"),
            "\(trail)")
        // Another terminal of the same session: asked again (the agent has no answer left, so
        // the signature is refused).
        let third = first + "-elsewhere"
        try "a third message\n".write(toFile: third, atomically: true, encoding: .utf8)
        chown(third, Self.a, Self.a)
        let elsewhere = try CLITerminal(
            world.cli, as: Self.a, [], script: "\(sign) '\(third)'; echo \" rc=$?\"", session: session.id)
        let refused = try #require(elsewhere.finish(), "the signature did not finish")
        #expect(!refused.stdout.contains(" rc=0"), "\(refused.stdout)\(refused.stderr)")
        #expect(access(third + ".sig", F_OK) != 0)
        #expect(agent.output.components(separatedBy: "/usr/bin/ssh-keygen (pid ").count == 3, "\(agent.output)")
    }

    /// Bytes on a handed-over connection that a process other than the one that connected
    /// wrote (a child it forked holding the socket) end the connection: the daemon reads each
    /// chunk's writer from the kernel (SO_PASSCRED). The connecting process itself is answered.
    @Test func bytesFromAProcessTheConnectionWasHandedOnToCloseIt() throws {
        let world = try Self.world(["--type", "ed25519"])
        let script = world.home + "/fork-writer.py"
        try FileManager.default.copyItem(atPath: Self.forkWriter, toPath: script)
        chmod(script, 0o644)
        let ran = try world.relay.daemon.run(as: Self.a, "/usr/bin/python3", [script, world.socket])
        #expect(ran.lines.contains { $0.hasPrefix("own ") && $0 != "own 0" }, "\(ran.output)")
        #expect(ran.lines.contains("child 0"), "\(ran.output)\n\(world.relay.daemon.log)")
        #expect(world.relay.daemon.log.contains("not by the connection's caller pid"), "\(world.relay.daemon.log)")
    }

    /// One uid's handed-over connections are capped at 64 (so it cannot take the daemon's 256
    /// from everyone): the 65th is refused with errSecAllocate, and once one ends another is
    /// taken. The test process passes socket pairs it made itself (their peer is itself).
    @Test func theDaemonServesAtMostSixtyFourHandedOverConnectionsAUid() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        var kept: [Int32] = []
        defer { for fd in kept { close(fd) } }
        func handOver() throws(KeygateError) {
            var pair: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else {
                throw KeygateError(.io, "socketpair failed")
            }
            defer { close(pair[0]) }
            do throws(KeygateError) {
                try SSHAgentHandOff.pass(pair[0], to: daemon.socket, accessGroups: [])
                kept.append(pair[1])
            } catch {
                close(pair[1])
                throw error
            }
        }
        for _ in 0..<DaemonSSHAgent.maximumConnectionsPerUser { try handOver() }
        do {
            try handOver()
            Issue.record("a 65th connection of one uid was taken")
        } catch {
            #expect(error.status == .allocate, "\(error)")
        }
        #expect(daemon.log.contains("too many SSH agent connections (at most 64 a uid"), "\(daemon.log)")
        close(kept.removeLast())
        var taken = false
        for _ in 0..<100 {
            do {
                try handOver()
                taken = true
                break
            } catch {
                usleep(50_000)
            }
        }
        #expect(taken, "no connection was taken after one ended")
    }
}

extension DaemonFixture {
    /// Runs `path arguments…` as root to its end and returns what it printed (both streams).
    static func launchAndWait(_ path: String, _ arguments: [String]) throws -> String {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("run-\(UUID().uuidString)").path
        defer { unlink(output) }
        let process = try launch(path, arguments, output: output)
        process.waitUntilExit()
        return (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    }
}
