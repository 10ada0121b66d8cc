import Foundation
import Glibc
import Keygate
import KeygatePolicy
import KeygateProtocol
import KeygateStore
import Testing

/// A program grant binds to the program that wrote the bytes, not to whatever the process runs
/// when the daemon reads its identity (issue 27 point 1). The attack: a process that is not
/// granted a group forks; the child connects, writes `hello` naming the group and a read in one
/// send, then `execve`s a granted program; the parent, holding the same socket, reads the reply.
/// The daemon now speaks first, a challenge made after it read the caller's identity, which
/// `hello` must echo: bytes written before that cannot carry it, and bytes written after it by the
/// process as it was when read are that process's (and a hello from a process that exec'd since
/// is refused too).
@Suite struct ExecRaceTests {
    let a = DaemonFixture.userA

    /// The attacker, in Python (run as user A): ROUNDS attempts in each of two ways, one line of
    /// outcome per attempt. `blind`: the red team's attack, hello written at once (it cannot know
    /// the nonce; it sends zeros). `echo`: the child waits for the challenge, echoes it, and
    /// execs right after writing. `honest`: the same without the exec (the control).
    static let script = #"""
        import os, socket, struct, sys, select, time
        path, hello_hex, read_hex, mode, rounds, target = sys.argv[1:7]
        hello = bytes.fromhex(hello_hex)
        read = bytes.fromhex(read_hex)

        def frames(sock, deadline):
            data = b""
            while time.monotonic() < deadline:
                ready, _, _ = select.select([sock], [], [], max(0, deadline - time.monotonic()))
                if not ready:
                    break
                try:
                    chunk = sock.recv(65536)
                except OSError:
                    break
                if not chunk:
                    break
                data += chunk
                while len(data) >= 4:
                    length = struct.unpack(">I", data[:4])[0]
                    if len(data) < 4 + length:
                        break
                    yield data[4], data[5], data[12:4 + length]
                    data = data[4 + length:]

        for attempt in range(int(rounds)):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.set_inheritable(True)
            connected_r, connected_w = os.pipe()
            child = os.fork()
            if child == 0:
                try:
                    os.close(connected_r)
                    sock.connect(path)
                    nonce = bytes(16)
                    if mode != "blind":
                        # The challenge: 12 header bytes, a 4-byte count, 16 bytes of nonce.
                        got = b""
                        while len(got) < 32:
                            chunk = sock.recv(32 - len(got))
                            if not chunk:
                                os._exit(4)
                            got += chunk
                        nonce = got[16:32]
                    sock.sendall(hello[:-16] + nonce + read)
                    # Only now may the parent read (before, it could take the challenge).
                    os.write(connected_w, b"c")
                    if mode != "honest":
                        os.execv(target, [target, "0.05"])
                    time.sleep(0.05)
                finally:
                    os._exit(3)
            os.close(connected_w)
            os.read(connected_r, 1)  # empty when the child failed first
            os.close(connected_r)
            outcome = "nothing"
            for version, kind, payload in frames(sock, time.monotonic() + 3):
                if kind == 0x88 or kind == 0x81:
                    continue
                if kind == 0x84:
                    outcome = "won"
                elif kind == 0x8F:
                    outcome = "refused %d" % struct.unpack(">i", payload[:4])[0]
                else:
                    outcome = "other %d" % kind
                break
            sock.close()
            os.waitpid(child, 0)
            print(outcome, flush=True)
        """#

    /// Writes the attacker script where user A can read it; removed with the returned guard.
    final class ScriptFile {
        let path = "/tmp/keygated-exec-race-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).py"
        init(_ text: String) throws {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            chmod(path, 0o644)
        }
        deinit { unlink(path) }
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// The hello (its nonce the last 16 bytes, zeros to be replaced) and the read, as frames.
    static func frames() throws -> (hello: String, read: String) {
        let hello = try Message.hello(
            minimumVersion: FrameLimits.version, maximumVersion: FrameLimits.version, accessGroups: ["probe.group"],
            client: "race", challenge: [UInt8](repeating: 0, count: ChallengeNonce.size)
        ).frame(requestID: 1).encoded()
        let read = try Message.copyMatching(ItemQuery(service: "api", account: "me", returnData: true))
            .frame(requestID: 2).encoded()
        return (hex(hello), hex(read))
    }

    /// Runs the attacker as user A: the outcome of each attempt.
    func attack(_ daemon: DaemonFixture, mode: String, rounds: Int, interpreter: [String] = ["/usr/bin/python3"])
        throws -> [String]
    {
        let script = try ScriptFile(Self.script)
        let (hello, read) = try Self.frames()
        let result = try daemon.run(
            as: a, interpreter[0],
            interpreter.dropFirst() + [script.path, daemon.socket, hello, read, mode, "\(rounds)", "/usr/bin/sleep"],
            timeout: 240)
        #expect(result.status == 0, "\(result.output)")
        return result.lines
    }

    @Test func bytesWrittenBeforeAnExecIntoAGrantedProgramAreNeverServedAsIt() throws {
        let probe = GrantTests.probeExecutable
        let policy = try GrantTests.PolicyFile(
            """
            grant access-group "probe.group" to program "\(probe)"
            grant access-group "probe.group" to program "/usr/bin/sleep"

            """)
        let daemon = try DaemonFixture(config: "policies = \(policy.path)\nidle-timeout = 5\n")
        try daemon.start()
        #expect(try daemon.probe(as: a, "add", "api", "me", "granted-only").lines == ["ok"])

        // The red team's attack, 200 times, and the same with the challenge echoed before the exec.
        let blind = try attack(daemon, mode: "blind", rounds: 200)
        let echoed = try attack(daemon, mode: "echo", rounds: 200)
        #expect(blind.count == 200 && echoed.count == 200)
        #expect(!blind.contains("won") && !echoed.contains("won"), "a read was served as the granted program")
        // Each attempt was refused by a rule of the daemon, not lost: the blind hello for its
        // nonce (errSecBadReq), the echoed one as what it was when read (python, not granted:
        // errSecMissingEntitlement) or for having exec'd since (errSecBadReq).
        #expect(Set(blind) == ["refused -909"], "\(Set(blind))")
        #expect(Set(echoed).isSubset(of: ["refused -909", "refused -34018"]), "\(Set(echoed))")
        let tally = Dictionary(echoed.map { ($0, 1) }, uniquingKeysWith: +)
        print("exec race, challenge echoed before the exec: \(tally.sorted { $0.key < $1.key })")
        #expect(daemon.log.contains("hello does not echo this connection's challenge"), "\(daemon.log)")
    }

    /// The control: the same script, honest and run by a granted interpreter, is served, so the
    /// harness sees a win when there is one.
    @Test func theSameRequestFromAGrantedProgramIsServed() throws {
        let copy = "/tmp/keygated-granted-python-\(getpid())"
        try? FileManager.default.removeItem(atPath: copy)
        let python = URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path
        try FileManager.default.copyItem(atPath: python, toPath: copy)
        defer { unlink(copy) }
        let policy = try GrantTests.PolicyFile(
            """
            grant access-group "probe.group" to program "\(GrantTests.probeExecutable)"
            grant access-group "probe.group" to program "\(copy)"

            """)
        let daemon = try DaemonFixture(config: "policies = \(policy.path)\n")
        try daemon.start()
        #expect(try daemon.probe(as: a, "add", "api", "me", "granted-only").lines == ["ok"])
        let honest = try attack(
            daemon, mode: "honest", rounds: 5, interpreter: ["/usr/bin/env", "PYTHONHOME=/usr", copy])
        #expect(honest == Array(repeating: "won", count: 5), "\(honest)")
        // And the plain python3, not granted, is refused the group.
        let ungranted = try attack(daemon, mode: "honest", rounds: 2)
        #expect(ungranted == ["refused -34018", "refused -34018"], "\(ungranted)")
    }

    /// The attacker of the reviewers' report, in Python, inside a user and pid namespace of its
    /// own (`unshare -Urpf`, open to any user): there it may name any process of its namespace as
    /// the sender of its bytes (`SCM_CREDENTIALS`). Each attempt: its child connects and execs the
    /// granted program (which sleeps); the parent reads the challenge, then sends hello and a read
    /// naming the child as their sender. One outcome line per attempt.
    static let forgingScript = #"""
        import os, socket, struct, sys, select, time
        path, hello_hex, read_hex, rounds, target = sys.argv[1:6]
        hello = bytes.fromhex(hello_hex)
        read = bytes.fromhex(read_hex)

        def receive(sock, deadline):
            data = b""
            while time.monotonic() < deadline:
                ready, _, _ = select.select([sock], [], [], max(0, deadline - time.monotonic()))
                if not ready:
                    return None
                chunk = sock.recv(65536)
                if not chunk:
                    return None
                data += chunk
                while len(data) >= 4:
                    length = struct.unpack(">I", data[:4])[0]
                    if len(data) < 4 + length:
                        break
                    frame, data = data[:4 + length], data[4 + length:]
                    yield frame[5], frame[12:]

        for attempt in range(int(rounds)):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.set_inheritable(True)
            r, w = os.pipe()
            child = os.fork()
            if child == 0:
                os.close(r)
                sock.connect(path)
                os.write(w, b"c")
                os.execv(target, [target, "5"])
            os.close(w)
            os.read(r, 1)
            os.close(r)
            outcome = "nothing"
            frames = receive(sock, time.monotonic() + 3)
            for kind, payload in frames or []:
                if kind == 0x88:
                    forged = struct.pack("iII", child, 0, 0)
                    message = hello[:-16] + payload[4:20] + read
                    sock.sendmsg([message], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, forged)])
                    continue
                if kind == 0x81:
                    continue
                if kind == 0x84:
                    outcome = "won"
                elif kind == 0x8F:
                    outcome = "refused %d" % struct.unpack(">i", payload[:4])[0]
                else:
                    outcome = "other %d" % kind
                break
            sock.close()
            os.kill(child, 9)
            os.waitpid(child, 0)
            print(outcome, flush=True)
        """#

    /// A process in a user and pid namespace of its own can name another process of that
    /// namespace as the sender of its bytes: so a caller outside the daemon's pid and user
    /// namespaces matches no program grant, whoever the kernel says sent the bytes.
    @Test func bytesNamingAGrantedProgramFromANamespaceOfTheirOwnAreNeverServedAsIt() throws {
        let policy = try GrantTests.PolicyFile(
            """
            grant access-group "probe.group" to program "\(GrantTests.probeExecutable)"
            grant access-group "probe.group" to program "/usr/bin/sleep"

            """)
        let daemon = try DaemonFixture(config: "policies = \(policy.path)\nidle-timeout = 5\n")
        try daemon.start()
        #expect(try daemon.probe(as: a, "add", "api", "me", "granted-only").lines == ["ok"])
        let script = try ScriptFile(Self.forgingScript)
        let (hello, read) = try Self.frames()
        let result = try daemon.run(
            as: a, "/usr/bin/unshare",
            ["-Urpf", "/usr/bin/python3", script.path, daemon.socket, hello, read, "60", "/usr/bin/sleep"],
            timeout: 240)
        #expect(result.status == 0, "\(result.output)")
        let outcomes = result.lines
        let tally = Dictionary(outcomes.map { ($0, 1) }, uniquingKeysWith: +)
        print("exec race with forged credentials: \(tally.sorted { $0.key < $1.key })")
        #expect(outcomes.count == 60, "\(result.output)")
        #expect(!outcomes.contains("won"), "a read was served as the granted program: \(tally)")
        #expect(Set(outcomes).isSubset(of: ["refused -909", "refused -34018"]), "\(tally)")
    }
}
