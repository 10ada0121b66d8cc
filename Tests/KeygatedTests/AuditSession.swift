import Foundation
import Glibc
import Testing

/// A login session for the audit tests without logind: a cgroup
/// `<cgroup2>/keygate-audit-<pid>-<n>.slice/session-<id>.scope`, which is what `sd_pid_get_session`
/// reads a process's session from. A probe run in it is, to the daemon, in session `<id>`.
final class AuditSession {
    let id: String
    private let slice: String
    private let scope: String
    private static let counter = Counter()

    init() throws {
        let mount = try #require(
            ReuseTerminal.cgroup2Mount(), "no cgroup2 hierarchy in /proc/self/mounts to make a session in")
        let number = Self.counter.next()
        id = "kg\(getpid())x\(number)"
        slice = mount + "/keygate-audit-\(getpid())-\(number).slice"
        scope = slice + "/session-\(id).scope"
        try #require(mkdir(slice, 0o755) == 0 || errno == EEXIST, "cannot make \(slice): errno \(errno)")
        try #require(mkdir(scope, 0o755) == 0 || errno == EEXIST, "cannot make \(scope): errno \(errno)")
    }

    deinit {
        // The scope is empty once its probes are reaped.
        rmdir(scope)
        rmdir(slice)
    }

    /// Runs `keygated-probe SOCKET arguments…` as `uid` inside this session, waiting up to 30 s.
    /// - Returns: the probe's pid (the shell that joins the session execs setpriv, which execs
    ///   the probe) and what it printed.
    func probe(_ daemon: DaemonFixture, as uid: UInt32, _ arguments: String...) throws -> (
        pid: Int32, result: DaemonFixture.Result
    ) {
        let output = daemon.directory + "/session-\(UUID().uuidString).out"
        defer { unlink(output) }
        let process = try DaemonFixture.launch(
            "/bin/sh", command(as: uid, [DaemonFixture.probePath, daemon.socket] + arguments), output: output)
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning && Date() < deadline { usleep(5_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            Issue.record("keygated-probe \(arguments) did not finish in 30 s")
        }
        process.waitUntilExit()
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        return (process.processIdentifier, DaemonFixture.Result(status: process.terminationStatus, output: text))
    }

    /// The arguments of `/bin/sh` that run `command` as `uid` inside this session (the shell
    /// joins the session's scope, then execs setpriv, which execs the command: one pid).
    func command(as uid: UInt32, _ command: [String]) -> [String] {
        [
            "-c", #"echo $$ > "$0/cgroup.procs" && exec "$@""#, scope, "/usr/bin/setpriv", "--reuid=\(uid)",
            "--regid=\(uid)", "--clear-groups",
        ] + command
    }

    private final class Counter: @unchecked Sendable {
        private var value = 0
        private let lock = NSLock()
        func next() -> Int {
            lock.lock()
            defer { lock.unlock() }
            value += 1
            return value
        }
    }
}

/// One record of a trail as the tests read it (JSON, through Foundation: the tests do not link
/// KeygateAudit).
struct TrailRecord {
    let fields: [String: Any]

    init(_ line: String) throws {
        fields = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
    }

    var sequence: Int { fields["seq"] as? Int ?? -1 }
    var op: String { fields["op"] as? String ?? "" }
    var decision: String { fields["decision"] as? String ?? "" }
    var account: String? { (fields["item"] as? [String: Any])?["account"] as? String }
    var service: String? { (fields["item"] as? [String: Any])?["service"] as? String }
    var caller: [String: Any]? { fields["caller"] as? [String: Any] }
    var callerUID: Int? { caller?["uid"] as? Int }
    var callerPID: Int? { caller?["pid"] as? Int }
}
