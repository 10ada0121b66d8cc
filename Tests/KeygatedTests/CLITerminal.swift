import Foundation
import Glibc
import Testing

/// `keygate` run as an unprivileged uid with a fresh pseudo-terminal as its controlling terminal
/// (`setsid -c`), so relayed prompts are asked there; the test reads what it shows and types.
final class CLITerminal {
    private let master: Int32
    private let slave: Int32
    private let process = Process()
    private let base: String
    private var shown: [UInt8] = []

    private var cgroup = ""

    /// Starts `keygate arguments…` as `uid` on a new terminal, environment as `cli` gives it;
    /// with `script`, runs `sh -c script` instead (`$0` is keygate), so several commands share
    /// the terminal. With `session`, the process joins a logind-style session cgroup
    /// (``ReuseTerminal``), the session the daemon then sees for it.
    init(_ cli: CLIFixture, as uid: UInt32, _ arguments: [String], script: String? = nil, session: String? = nil)
        throws
    {
        (master, slave) = try {
            let pair = try PseudoTerminalPair(); return (pair.master, pair.slave)
        }()
        base = cli.daemon.directory + "/terminal-\(UUID().uuidString)"
        var join = ""
        if let session {
            let root = try #require(ReuseTerminal.cgroup2Mount(), "no cgroup2 hierarchy mounted")
            cgroup = "\(root)/user.slice/user-\(uid).slice/session-\(session).scope"
            try FileManager.default.createDirectory(atPath: cgroup, withIntermediateDirectories: true)
            join = "echo $$ > '\(cgroup)/cgroup.procs' && "
        }
        let command = script.map { ["/bin/sh", "-c", $0, CLIFixture.keygatePath] } ?? [CLIFixture.keygatePath]
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments =
            [
                "-c",
                join + "exec /usr/bin/setsid --wait --ctty /usr/bin/timeout -s KILL 30 /usr/bin/setpriv "
                    + "--reuid=\(uid) --regid=\(uid) --clear-groups \"$@\" >'\(base).out' 2>'\(base).err'",
                "sh",
            ] + command + arguments
        process.environment = cli.environment(uid)
        process.standardInput = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        try process.run()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        close(slave)
        close(master)
        unlink(base + ".out")
        unlink(base + ".err")
        if !cgroup.isEmpty {
            // The session's last processes may still be leaving.
            for _ in 0..<100 where rmdir(cgroup) != 0 { usleep(10_000) }
        }
    }

    /// Everything the terminal showed so far.
    var screen: String { String(decoding: shown, as: UTF8.self) }

    /// Reads the terminal until it has shown `text` (up to `timeout` s); false when it never does.
    func wait(for text: String, timeout: Double = 15) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !screen.contains(text) && Date() < deadline {
            var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = read(master, &buffer, buffer.count)
            guard count > 0 else { break }
            shown += buffer[0..<count]
        }
        return screen.contains(text)
    }

    /// Types `bytes` on the terminal.
    func type(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    /// Waits (up to `timeout` s) for keygate to exit: its status, standard output and error.
    func finish(timeout: Double = 30) -> (status: Int32, stdout: String, stderr: String)? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { _ = wait(for: "\u{0}", timeout: 0.1) }
        guard !process.isRunning else { return nil }
        process.waitUntilExit()
        let read = { (suffix: String) in (try? String(contentsOfFile: self.base + suffix, encoding: .utf8)) ?? "" }
        return (process.terminationStatus, read(".out"), read(".err"))
    }

    /// Whether the terminal echoes and reads lines again (as it was before any prompt).
    var isCooked: Bool {
        var settings = termios()
        guard tcgetattr(slave, &settings) == 0 else { return false }
        return settings.c_lflag & tcflag_t(ECHO) != 0 && settings.c_lflag & tcflag_t(ICANON) != 0
    }
}
