import Foundation
import Glibc
import KeygateTesting
import Synchronization
import Testing

/// A running `keygate ssh-agent` in a ``CLIWorld``, answering its questions from `passphrases`
/// (one line each, on descriptor 3), through the `askpass` program, or with `--no-interaction`
/// when there are neither. It runs in a session of its own (`setsid`), with no controlling
/// terminal to ask on.
final class SSHAgentProcess {
    let process = Process()
    let socket: String
    let log: String
    /// The agent's own pid (`setsid` runs it in a child of its own).
    private(set) var pid: Int32 = 0

    init(_ world: CLIWorld, passphrases: [String]?, askpass: String? = nil, arguments: [String] = []) throws {
        socket = world.directory.path + "/agent.sock"
        log = world.directory.path + "/agent.log"
        let answers = try world.directory.file(
            "answers-\(UUID().uuidString)", contents: (passphrases ?? []).map { $0 + "\n" }.joined())
        let words =
            [KeygateBinary.url.path]
            + (passphrases != nil
                ? ["ssh-agent", "--passphrase-fd", "3"]
                : askpass != nil ? ["ssh-agent"] : ["--no-interaction", "ssh-agent"])
            + ["-a", socket] + arguments
        let quoted = words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let pidFile = world.directory.path + "/agent-\(UUID().uuidString).pid"
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setsid")
        process.arguments = [
            "--wait", "/bin/sh", "-c", "echo $$ > '\(pidFile)'; exec \(quoted) 3<'\(answers)' 2>'\(log)' >/dev/null",
        ]
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in world.environment { environment[key] = value }
        environment["KEYGATE_ASKPASS"] = askpass
        environment["SSH_ASKPASS"] = nil
        process.environment = environment
        try process.run()
        for _ in 0..<200 where !FileManager.default.fileExists(atPath: socket) && process.isRunning {
            usleep(50_000)
        }
        pid =
            Int32(
                ((try? String(contentsOfFile: pidFile, encoding: .utf8)) ?? "").trimmingCharacters(
                    in: .whitespacesAndNewlines))
            ?? 0
        guard FileManager.default.fileExists(atPath: socket) else {
            stop()
            throw SetupFailure("the agent did not listen within 10 s: \(logText)")
        }
    }

    /// What the agent wrote on standard error.
    var logText: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// Stops the agent by its pid (SIGTERM, then SIGKILL after 5 s); it removes its socket, and
    /// `setsid` then ends.
    func stop() {
        if pid > 0 {
            kill(pid, SIGTERM)
            for _ in 0..<100 where process.isRunning { usleep(50_000) }
            if process.isRunning { kill(pid, SIGKILL) }
            pid = 0
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// Runs a tool (OpenSSH's, git) to its end, with its output, as ``KeygateBinary`` runs keygate
/// (an inherited `SSH_AUTH_SOCK` is dropped: a tool talks to the agent it is given).
struct Tool {
    let status: Int32
    let stdout: String
    let stderr: String

    @discardableResult
    static func run(_ path: String, _ arguments: [String], environment: [String: String] = [:], stdin: String = "")
        throws -> Tool
    {
        let result = try KeygateBinary.run(
            arguments, stdin: Data(stdin.utf8), environment: ["SSH_AUTH_SOCK": ""].merging(environment) { $1 },
            executable: URL(fileURLWithPath: path))
        return Tool(status: result.status, stdout: result.stdoutText, stderr: result.stderr)
    }
}

/// A loopback `sshd` as root on a free port of 127.0.0.1, with an Ed25519 host key and the
/// given `authorized_keys`. It runs as the daemon it is (started through `sh`, found and
/// stopped by the pid it writes): run in the foreground under Foundation's `Process`, its
/// closing every inherited descriptor makes `Process` wait for it to end, stalling every
/// other child's exit.
final class LoopbackSSHD {
    let directory: TemporaryDirectory
    private(set) var pid: Int32 = 0
    let port: UInt16
    let hostKeyFingerprint: String

    /// An sshd with one host key made by `ssh-keygen hostKey` (`-t ed25519` by default).
    init(authorizedKeys: String, hostKey: [String] = ["-t", "ed25519"]) throws {
        try #require(geteuid() == 0, "sshd runs as root (CI runs the tests as root)")
        directory = try TemporaryDirectory()
        let path = directory.path
        try Tool.run("/usr/bin/ssh-keygen", ["-q"] + hostKey + ["-N", "", "-f", path + "/host"])
        hostKeyFingerprint = String(
            try Tool.run("/usr/bin/ssh-keygen", ["-l", "-f", path + "/host.pub"]).stdout.split(separator: " ")[1])
        _ = try directory.file("authorized_keys", contents: authorizedKeys)
        port = try Self.freePort()
        let config = try directory.file(
            "sshd_config",
            contents: """
                Port \(port)
                ListenAddress 127.0.0.1
                HostKey \(path)/host
                PidFile \(path)/sshd.pid
                AuthorizedKeysFile \(path)/authorized_keys
                StrictModes no
                UsePAM no
                PasswordAuthentication no
                KbdInteractiveAuthentication no
                PermitRootLogin prohibit-password
                AuthenticationMethods publickey

                """)
        mkdir("/run/sshd", 0o755)
        let started = try Tool.run("/usr/sbin/sshd", ["-f", config, "-E", path + "/sshd.log"])
        guard started.status == 0 else { throw SetupFailure("sshd did not start: \(started.stderr)") }
        for _ in 0..<200 where pid == 0 {
            pid =
                Int32(
                    ((try? String(contentsOfFile: path + "/sshd.pid", encoding: .utf8)) ?? "")
                        .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
            if pid == 0 { usleep(50_000) }
        }
        // One probe at a time until it answers (each probe is a connection sshd counts).
        var answered = false
        for _ in 0..<200 {
            answered = Self.accepts(port)
            if answered { break }
            usleep(50_000)
        }
        guard pid > 0, answered else {
            stop()
            throw SetupFailure("sshd did not listen on 127.0.0.1:\(port) within 10 s")
        }
    }

    /// Logs in with `ssh` through the agent at `socket` and runs `true`.
    func login(agent socket: String) throws -> Tool {
        try Tool.run(
            "/usr/bin/ssh",
            [
                "-F", "/dev/null", "-o", "UserKnownHostsFile=\(directory.path)/known_hosts",
                "-o", "StrictHostKeyChecking=accept-new", "-o", "BatchMode=yes", "-o", "IdentityAgent=\(socket)",
                "-o", "IdentityFile=none", "-o", "PreferredAuthentications=publickey", "-o", "ConnectTimeout=10",
                "-p", "\(port)", "\(PAMWorld.currentUser())@127.0.0.1", "true",
            ])
    }

    /// What sshd logged.
    var log: String { (try? String(contentsOfFile: directory.path + "/sshd.log", encoding: .utf8)) ?? "" }

    /// Stops the listener by its pid (its session processes end with their connections).
    func stop() {
        guard pid > 0 else { return }
        kill(pid, SIGKILL)
        pid = 0
    }

    deinit { stop() }

    static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw SetupFailure("no free port") }
        return UInt16(bigEndian: address.sin_port)
    }

    static func accepts(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

/// A fixture that could not be set up.
struct SetupFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
