import Foundation
import Glibc
import KeygateTesting
import Testing

/// `keygate ssh-agent` with OpenSSH's own clients: `ssh-add`, `ssh-keygen -Y`, `ssh` against a
/// loopback `sshd`, and `git commit -S` (issue 31; spec §9 for the keys' rules).
@Suite(.serialized) struct SSHAgentTests {
    /// A world with keys made by `keygate key create`.
    static func world(_ keys: [[String]]) throws -> CLIWorld {
        let world = try CLIWorld()
        for key in keys {
            let made = try world.run(["key", "create"] + key)
            try #require(made.status == 0, "\(made.stderr)")
        }
        return world
    }

    static func sign(_ world: CLIWorld, _ agent: SSHAgentProcess, label: String) throws -> (Tool, String) {
        let publicKey = try world.directory.file(
            "\(label).pub", contents: try world.run(["key", "public", "--label", label]).stdoutText)
        let message = try world.directory.file("message-\(UUID().uuidString)", contents: "signed through the agent\n")
        let signed = try Tool.run(
            "/usr/bin/ssh-keygen", ["-Y", "sign", "-n", "file", "-f", publicKey, message],
            environment: ["SSH_AUTH_SOCK": agent.socket])
        return (signed, message)
    }

    static func verify(_ world: CLIWorld, label: String, message: String) throws -> Tool {
        let line = try world.run(["key", "public", "--label", label]).stdoutText
        let allowed = try world.directory.file("allowed-\(label)", contents: "me \(line)")
        return try Tool.run(
            "/usr/bin/ssh-keygen", ["-Y", "verify", "-f", allowed, "-I", "me", "-n", "file", "-s", message + ".sig"],
            stdin: "signed through the agent\n")
    }

    /// `ssh-add -L` lists each key in OpenSSH form with its label as comment, as `key public`
    /// prints it; `ssh-keygen -Y sign` through the agent makes signatures `ssh-keygen -Y verify`
    /// accepts, for P-256 and Ed25519 (spec 9.5.4: keys with no flags sign without a proof).
    @Test func sshAddListsTheKeysAndTheirSignaturesVerify() throws {
        let world = try Self.world([["--type", "p256", "--label", "deploy"], ["--type", "ed25519", "--label", "git"]])
        let agent = try SSHAgentProcess(world, passphrases: nil)
        defer { agent.stop() }
        let listed = try Tool.run("/usr/bin/ssh-add", ["-L"], environment: ["SSH_AUTH_SOCK": agent.socket])
        #expect(listed.status == 0, "\(listed.stderr)")
        let expected = try ["deploy", "git"].map { try world.run(["key", "public", "--label", $0]).stdoutText }
        #expect(listed.stdout == expected.joined())
        for label in ["deploy", "git"] {
            let (signed, message) = try Self.sign(world, agent, label: label)
            #expect(signed.status == 0, "\(label): \(signed.stderr)")
            let verified = try Self.verify(world, label: label, message: message)
            #expect(verified.status == 0 && verified.stdout.contains("Good \"file\" signature"), "\(verified)")
        }
        let trail = try String(contentsOfFile: world.audit, encoding: .utf8)
        #expect(trail.contains("\"exe\": \"/usr/bin/ssh-keygen\""), "the caller is named from the kernel")
        #expect(trail.contains("keyUse: algid:sign:ECDSA:message-X962:SHA256 of input sha256 "))
        #expect(!trail.contains("signed through the agent"), "the signed data is never recorded")
    }

    /// Spec 9.5.1 / 9.8.2: a key whose uses need the passcode signs only after the agent's own
    /// proof (the question names the requesting program); a wrong passphrase signs nothing, and
    /// with no one to ask the request is refused at once, never left hanging.
    @Test func aPasscodeKeySignsOnlyAfterTheAgentsProof() throws {
        let world = try Self.world([["--type", "p256", "--label", "guarded", "--access-control", "devicePasscode"]])
        let listed = try world.run(["key", "list"]).stdoutText
        #expect(listed.contains("privateKeyUsage"), "the CLI adds privateKeyUsage: \(listed)")
        do {
            let agent = try SSHAgentProcess(world, passphrases: ["s3cret"])
            defer { agent.stop() }
            let (signed, message) = try Self.sign(world, agent, label: "guarded")
            #expect(signed.status == 0, "\(signed.stderr) \(agent.logText)")
            #expect(try Self.verify(world, label: "guarded", message: message).status == 0)
            #expect(agent.logText.contains("/usr/bin/ssh-keygen (pid "), "\(agent.logText)")
            #expect(agent.logText.contains("asks for SSH signature with key guarded"), "\(agent.logText)")
        }
        do {
            let agent = try SSHAgentProcess(world, passphrases: ["wrong"])
            defer { agent.stop() }
            let (signed, message) = try Self.sign(world, agent, label: "guarded")
            #expect(signed.status != 0)
            #expect(!FileManager.default.fileExists(atPath: message + ".sig"))
        }
        do {
            let agent = try SSHAgentProcess(world, passphrases: nil)
            defer { agent.stop() }
            let started = Date()
            let (signed, _) = try Self.sign(world, agent, label: "guarded")
            #expect(signed.status != 0)
            #expect(Date().timeIntervalSince(started) < 10, "refused at once")
            #expect(agent.logText.contains("errSecInteractionNotAllowed"), "\(agent.logText)")
        }
        #expect(try world.run(["key", "list", "--label", "guarded"]).stdoutText == listed, "the key is kept")
    }

    /// Issue 30, point 4: the embedded agent, with no terminal and no descriptor, asks through
    /// the askpass program itself, as `keygate agent` would for the daemon: the question names
    /// the requesting program and pid (from the kernel) above PAM's prompt.
    @Test func withNoTerminalTheAgentAsksThroughAskpassNamingTheRequester() throws {
        let world = try Self.world([["--type", "ed25519", "--label", "asked", "--access-control", "devicePasscode"]])
        let asked = world.directory.path + "/asked.txt"
        let askpass = try world.directory.file(
            "askpass", contents: "#!/bin/sh\nprintf '%s\\n---\\n' \"$1\" >> '\(asked)'\necho s3cret\n")
        chmod(askpass, 0o755)
        let agent = try SSHAgentProcess(world, passphrases: nil, askpass: askpass)
        defer { agent.stop() }
        let (signed, message) = try Self.sign(world, agent, label: "asked")
        #expect(signed.status == 0, "\(signed.stderr)\n\(agent.logText)")
        #expect(try Self.verify(world, label: "asked", message: message).status == 0)
        let question = (try? String(contentsOfFile: asked, encoding: .utf8)) ?? ""
        #expect(
            question.contains("keygate ssh-agent: /usr/bin/ssh-keygen (pid ")
                && question.contains("asks for SSH signature with key asked"), "\(question)")
    }

    /// A real `ssh` login to a loopback `sshd` with the key in `authorized_keys`: the audit
    /// record of the signature names that server's host key (session-bind@openssh.com). The
    /// key's group is granted to `ssh` only: `ssh-keygen` is not offered the key.
    @Test func aLoginIsAuditedWithTheServersHostKeyAndOtherProgramsAreNotGranted() throws {
        let world = try CLIWorld()
        let policies = world.directory.path + "/config/keygate/policies"
        try FileManager.default.createDirectory(atPath: policies, withIntermediateDirectories: true)
        try "grant access-group \"deploy-ssh\" to program \"/usr/bin/ssh\"\n".write(
            toFile: policies + "/ssh.policy", atomically: true, encoding: .utf8)
        let made = try world.run([
            "key", "create", "--type", "ed25519", "--label", "deploy", "--access-group", "deploy-ssh",
        ])
        try #require(made.status == 0, "\(made.stderr)")
        let line = try world.run(["key", "public", "--label", "deploy", "--access-group", "deploy-ssh"]).stdoutText
        let sshd = try LoopbackSSHD(authorizedKeys: line)
        defer { sshd.stop() }
        let agent = try SSHAgentProcess(world, passphrases: nil, arguments: ["--access-group", "deploy-ssh"])
        defer { agent.stop() }
        let login = try sshd.login(agent: agent.socket)
        #expect(login.status == 0, "\(login.stderr)\n\(agent.logText)\n\(sshd.log)")
        let trail = try String(contentsOfFile: world.audit, encoding: .utf8)
        #expect(trail.contains("destination: \(sshd.hostKeyFingerprint) (ssh-ed25519)"), "\(trail)")
        #expect(trail.contains("\"exe\": \"/usr/bin/ssh\""))
        let listed = try Tool.run("/usr/bin/ssh-add", ["-L"], environment: ["SSH_AUTH_SOCK": agent.socket])
        #expect(!listed.stdout.contains(line.split(separator: " ")[1]), "ssh-add is not granted the key")
        let publicKey = try world.directory.file("deploy.pub", contents: line)
        let message = try world.directory.file("m", contents: "x")
        let refused = try Tool.run(
            "/usr/bin/ssh-keygen", ["-Y", "sign", "-n", "file", "-f", publicKey, message],
            environment: ["SSH_AUTH_SOCK": agent.socket])
        #expect(refused.status != 0, "ssh-keygen signed with a key granted to ssh only")
    }

    /// A server whose only host key is RSA (signing the binding with rsa-sha2-512) or ECDSA on
    /// P-384 or P-521 binds the connection too: the signature's record names that host key.
    @Test(arguments: [["-t", "rsa", "-b", "3072"], ["-t", "ecdsa", "-b", "384"], ["-t", "ecdsa", "-b", "521"]])
    func aServerWithAnRSAOrECDSAHostKeyIsNamedInTheRecord(_ hostKey: [String]) throws {
        let world = try Self.world([["--type", "p256", "--label", "deploy"]])
        let line = try world.run(["key", "public", "--label", "deploy"]).stdoutText
        let sshd = try LoopbackSSHD(authorizedKeys: line, hostKey: hostKey)
        defer { sshd.stop() }
        let agent = try SSHAgentProcess(world, passphrases: nil)
        defer { agent.stop() }
        let login = try sshd.login(agent: agent.socket)
        #expect(login.status == 0, "\(login.stderr)\n\(agent.logText)\n\(sshd.log)")
        let type = hostKey[1] == "rsa" ? "ssh-rsa" : "ecdsa-sha2-nistp\(hostKey[3])"
        let trail = try String(contentsOfFile: world.audit, encoding: .utf8)
        #expect(trail.contains("destination: \(sshd.hostKeyFingerprint) (\(type))"), "\(trail)\n\(agent.logText)")
        #expect(!agent.logText.contains("session-bind@openssh.com refused"), "\(agent.logText)")
    }

    /// `git commit -S` with `gpg.format=ssh` signs through the agent, and git verifies it.
    @Test func gitCommitsAreSignedThroughTheAgent() throws {
        let world = try Self.world([["--type", "ed25519", "--label", "git"]])
        let agent = try SSHAgentProcess(world, passphrases: nil)
        defer { agent.stop() }
        let line = try world.run(["key", "public", "--label", "git"]).stdoutText
            .trimmingCharacters(in: .newlines)
        let repository = world.directory.path + "/repository"
        let allowed = try world.directory.file("allowed_signers", contents: "me@example.org \(line)\n")
        let environment = [
            "SSH_AUTH_SOCK": agent.socket, "HOME": world.directory.path, "GIT_CONFIG_NOSYSTEM": "1",
        ]
        try #require(try Tool.run("/usr/bin/git", ["init", "-q", repository], environment: environment).status == 0)
        let settings = [
            "-c", "user.name=Me", "-c", "user.email=me@example.org", "-c", "gpg.format=ssh",
            "-c", "user.signingkey=key::\(line)", "-c", "gpg.ssh.allowedSignersFile=\(allowed)",
        ]
        let commit = try Tool.run(
            "/usr/bin/git", ["-C", repository] + settings + ["commit", "-S", "--allow-empty", "-q", "-m", "signed"],
            environment: environment)
        #expect(commit.status == 0, "\(commit.stderr)\n\(agent.logText)")
        let verified = try Tool.run(
            "/usr/bin/git", ["-C", repository] + settings + ["verify-commit", "HEAD"], environment: environment)
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(verified.stderr.contains("Good \"git\" signature"), "\(verified.stderr)")
    }

    /// Bad frames: a length past 256 KiB, or a frame that does not parse, closes the connection
    /// at once; adding a key is refused with SSH_AGENT_FAILURE; the agent keeps serving, and
    /// nothing was added.
    @Test func badFramesAreRefusedAndChangeNothing() throws {
        let world = try Self.world([["--type", "ed25519", "--label", "only"]])
        let agent = try SSHAgentProcess(world, passphrases: nil)
        defer { agent.stop() }
        func exchange(_ bytes: [UInt8]) throws -> [UInt8] {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (index, byte) in agent.socket.utf8.enumerated() { raw[index] = byte }
            }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            try #require(connected == 0)
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var reply = [UInt8](repeating: 0, count: 1024)
            let got = read(fd, &reply, reply.count)
            return got > 0 ? Array(reply[0..<got]) : []
        }
        #expect(try exchange([0x00, 0x04, 0x00, 0x01, 11]) == [], "an oversized frame closes the connection")
        #expect(try exchange([0, 0, 0, 3, 13, 0, 0]) == [], "a frame that does not parse closes it")
        var add: [UInt8] = [17]
        add += [0, 0, 0, 11] + Array("ssh-ed25519".utf8)
        #expect(try exchange([0, 0, 0, UInt8(add.count)] + add) == [0, 0, 0, 1, 5], "adding is refused")
        let listed = try Tool.run("/usr/bin/ssh-add", ["-l"], environment: ["SSH_AUTH_SOCK": agent.socket])
        #expect(listed.status == 0 && listed.stdout.split(separator: "\n").count == 1, "\(listed)")
        #expect(agent.logText.contains("a frame of 262145 bytes"), "\(agent.logText)")
        #expect(agent.logText.contains("adding keys through the agent is refused"))
    }

    /// Bytes that a process other than the one that connected wrote (a child it forked holding
    /// the socket) end the connection: the agent reads each chunk's writer from the kernel
    /// (SO_PASSCRED), so a program cannot lend its connection, and the grants of its
    /// executable, to another. The connecting process itself is answered.
    @Test func bytesWrittenByAnotherProcessCloseTheConnection() throws {
        let world = try Self.world([["--type", "ed25519", "--label", "only"]])
        let agent = try SSHAgentProcess(world, passphrases: nil)
        defer { agent.stop() }
        let script =
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().path
            + "/Scripts/ssh-agent-fork-writer.py"
        let ran = try Tool.run("/usr/bin/python3", [script, agent.socket])
        let lines = ran.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("own ") && $0 != "own 0" }, "\(ran)")
        #expect(lines.contains("child 0"), "\(ran)\n\(agent.logText)")
        #expect(agent.logText.contains("not by the connection's caller pid"), "\(agent.logText)")
    }

    /// Another uid is not served, even when the socket's mode would let it connect.
    @Test func anotherUidIsNotServed() throws {
        try #require(geteuid() == 0, "the test switches to another uid (CI runs the tests as root)")
        let world = try Self.world([["--type", "ed25519", "--label", "mine"]])
        let agent = try SSHAgentProcess(world, passphrases: nil)
        defer { agent.stop() }
        chmod(world.directory.path, 0o755)
        chmod(agent.socket, 0o666)
        let other = try Tool.run(
            "/usr/bin/setpriv",
            ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/ssh-add", "-L"],
            environment: ["SSH_AUTH_SOCK": agent.socket])
        #expect(other.status != 0)
        #expect(!other.stdout.contains("mine"))
        #expect(agent.logText.contains("a connection of uid 65534"), "\(agent.logText)")
    }
}
