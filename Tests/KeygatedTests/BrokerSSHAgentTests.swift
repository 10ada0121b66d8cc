import Foundation
import Glibc
import Testing

/// `keygate --daemon ssh-agent` (issue 31, point 6): each accepted connection is handed to
/// `keygated` (SCM_RIGHTS), which serves the agent protocol with the keys it holds, for the
/// program the kernel names as the connection's peer, and asks each proof of the session's
/// `keygate agent`. Clients run as unprivileged uids; the daemon as root, with PAM.
@Suite(.serialized) struct BrokerSSHAgentTests {
    static let a = DaemonFixture.userA
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

    static func world(_ key: [String]) throws -> World {
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
                "--reuid=\(a)", "--regid=\(a)", "--clear-groups", CLIFixture.keygatePath, "--daemon", "ssh-agent", "-a",
                socket,
            ], output: output, environment: cli.environment(a).merging(["PATH": "/usr/bin:/bin"]) { $1 })
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

    static func sign(_ world: World, as uid: UInt32 = a) throws -> (DaemonFixture.Result, String) {
        let line = try world.cli.run(as: a, ["--daemon", "key", "public", "--label", "deploy"]).stdout
        let publicKey = world.home + "/deploy.pub"
        let message = world.home + "/message-\(UUID().uuidString)"
        try line.write(toFile: publicKey, atomically: true, encoding: .utf8)
        try "signed in the daemon\n".write(toFile: message, atomically: true, encoding: .utf8)
        for path in [publicKey, message] { chown(path, a, a) }
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
