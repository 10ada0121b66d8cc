import Foundation
import Glibc
import Testing

/// A login session and a terminal for daemon clients, made as the kernel reports them (the
/// daemon believes nothing else): the session is a logind-style cgroup
/// (`user.slice/user-UID.slice/session-ID.scope` in the cgroup2 hierarchy, which is where
/// sd-login reads a pid's session), the terminal a fresh pseudo-terminal made the controlling
/// terminal of a long-lived shell (`setsid -c`) that runs the clients one after another, as a
/// user's shell in a terminal window does. The shell reads its command lines from a FIFO.
final class ReuseTerminal {
    let session: String
    private let cgroup: String
    private let master: Int32
    private let slave: Int32
    private let directory: String
    private let fifo: String
    private var writer: Int32 = -1
    private let shell = Process()
    private var count = 0

    /// A terminal in `session` of `uid` (nil: no logind session), its files in `directory`.
    init(uid: UInt32, session: String?, directory: String) throws {
        (master, slave) = try {
            let pair = try PseudoTerminalPair(); return (pair.master, pair.slave)
        }()
        self.directory = directory
        self.session = session ?? ""
        fifo = "\(directory)/terminal-\(UUID().uuidString).fifo"
        try #require(mkfifo(fifo, 0o600) == 0)
        if let session {
            let root = try #require(Self.cgroup2Mount(), "no cgroup2 hierarchy mounted (sd-login reads sessions there)")
            cgroup = "\(root)/user.slice/user-\(uid).slice/session-\(session).scope"
            try FileManager.default.createDirectory(atPath: cgroup, withIntermediateDirectories: true)
        } else {
            cgroup = ""
        }
        let join = cgroup.isEmpty ? "" : "echo $$ > \(cgroup)/cgroup.procs && "
        let loop = "while read -r line; do eval \"$line\"; done < \(fifo)"
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", join + "exec setsid -w -c /bin/sh -c " + Self.quoted(loop)]
        shell.standardInput = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        shell.standardOutput = FileHandle.nullDevice
        shell.standardError = FileHandle.nullDevice
        try shell.run()
        let deadline = Date().addingTimeInterval(10)
        while writer < 0 && Date() < deadline {
            writer = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            if writer < 0 { usleep(10_000) }
        }
        try #require(writer >= 0, "the terminal's shell did not start")
    }

    deinit {
        if writer >= 0 { close(writer) }
        let deadline = Date().addingTimeInterval(10)
        while shell.isRunning && Date() < deadline { usleep(10_000) }
        if shell.isRunning { kill(shell.processIdentifier, SIGKILL) }
        shell.waitUntilExit()
        close(slave)
        close(master)
        unlink(fifo)
        if !cgroup.isEmpty {
            // The session's last processes may still be leaving.
            for _ in 0..<100 where rmdir(cgroup) != 0 { usleep(10_000) }
        }
    }

    /// Where cgroup2 is mounted (`/sys/fs/cgroup` or, on hybrid systems, `/sys/fs/cgroup/unified`).
    static func cgroup2Mount() -> String? {
        guard let mounts = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return nil }
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count > 2 && fields[2] == "cgroup2" { return String(fields[1]) }
        }
        return nil
    }

    /// Runs `keygated-probe SOCKET arguments…` for each entry, one after another, as `uid` in
    /// this terminal's shell; the outputs, in order (each waited for up to 30 s).
    func run(as uid: UInt32, socket: String, _ commands: [[String]]) throws -> [DaemonFixture.Result] {
        try commands.map { command in
            try run(as: uid, [DaemonFixture.probePath, socket] + command)
        }
    }

    /// Runs `command` as `uid` in this terminal's shell, with only `environment` (when given)
    /// and descriptor 3 reading `descriptor3` (a file the root shell opens), waiting up to 30 s:
    /// its standard output and error together, and its exit status.
    func run(
        as uid: UInt32, _ command: [String], environment: [String: String]? = nil, descriptor3: String? = nil
    ) throws -> DaemonFixture.Result {
        count += 1
        let output = "\(fifo).\(count).out"
        defer {
            unlink(output)
            unlink(output + ".done")
        }
        let variables = environment.map {
            ["/usr/bin/env", "-i"] + $0.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }
        }
        let argv =
            ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups"] + (variables ?? []) + command
        // The exit status on a line of its own (keygate prints a value without a newline).
        let line =
            argv.map(Self.quoted).joined(separator: " ") + (descriptor3.map { " 3<" + Self.quoted($0) } ?? "")
            + " > \(output) 2>&1; printf '\\n%s\\n' $? >> \(output); : > \(output).done\n"
        let bytes = Array(line.utf8)
        try #require(bytes.withUnsafeBytes { write(writer, $0.baseAddress!, $0.count) } == bytes.count)
        let deadline = Date().addingTimeInterval(30)
        while access(output + ".done", F_OK) != 0 {
            try #require(Date() < deadline, "\(command) did not finish in 30 s")
            try #require(shell.isRunning, "the terminal's shell exited")
            usleep(10_000)
        }
        var lines = ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: "\n")
        let status = lines.popLast().flatMap { Int32($0) } ?? -1
        return DaemonFixture.Result(status: status, output: lines.joined(separator: "\n"))
    }

    private static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
