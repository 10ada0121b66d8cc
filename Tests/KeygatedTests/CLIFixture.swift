import Foundation
import Glibc
import Testing

/// The `keygate` debug binary run as an unprivileged uid (`setpriv --reuid/--regid
/// --clear-groups`, in a new session so it has no controlling terminal) against a ``DaemonFixture``'s daemon, with a clean environment: its own home
/// (owned by the uid, 0700) for anything embedded mode writes, and `KEYGATE_SOCKET` naming the
/// fixture's socket.
struct CLIFixture {
    let daemon: DaemonFixture
    /// What must live as long as this fixture (a ``RelayFixture`` stops its daemon when released).
    var owner: AnyObject?

    static let keygatePath = DaemonFixture.binaryDirectory.appendingPathComponent("keygate").path

    /// What the client's descriptor 3 (`--passphrase-fd 3`) holds.
    enum Answers {
        /// Nothing open on 3.
        case none
        /// These lines, then end of file.
        case lines([String])
        /// A pipe nobody ever writes to and that never ends (the prompt goes unanswered).
        case silence
    }

    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        /// Standard output as bytes (a signature, a raw public key).
        var stdoutBytes: [UInt8] = []
        /// The last line of standard error.
        var lastErrorLine: String { stderr.split(separator: "\n").last.map(String.init) ?? "" }
        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    /// `uid`'s home for this fixture, created (owned by the uid, 0700) on first use.
    func home(_ uid: UInt32) -> String {
        let path = daemon.directory + "/home-\(uid)"
        if access(path, F_OK) != 0 {
            mkdir(path, 0o700)
            chown(path, uid, uid)
        }
        return path
    }

    /// The environment a run of `uid` gets: its home, XDG directories inside it, the fixture's
    /// socket, and `extra` on top (a nil value removes a variable).
    func environment(_ uid: UInt32, _ extra: [String: String?] = [:]) -> [String: String] {
        let home = home(uid)
        var environment = [
            "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": home, "XDG_DATA_HOME": home + "/data",
            "XDG_CONFIG_HOME": home + "/config", "XDG_RUNTIME_DIR": home + "/run", "KEYGATE_SOCKET": daemon.socket,
        ]
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    /// Runs `keygate arguments…` as `uid`, standard input from `stdin`, descriptor 3 as
    /// `answers`; kills it (and fails the test) after `timeout` seconds.
    func run(
        as uid: UInt32, _ arguments: [String], stdin: String = "", answers: Answers = .none,
        environment extra: [String: String?] = [:], timeout: Double = 30
    ) throws -> Result {
        let base = daemon.directory + "/cli-\(UUID().uuidString)"
        defer { for suffix in [".in", ".out", ".err", ".fd3", ".fifo"] { unlink(base + suffix) } }
        try stdin.write(toFile: base + ".in", atomically: false, encoding: .utf8)
        // The redirections are opened by the root shell before setpriv drops to the uid, so the
        // client only inherits descriptors, never reaches the files. setsid may fork (the shell
        // can lead its process group), so `timeout` inside the new session is what kills a hung
        // client; the outer kill below is the last resort.
        var redirect = ""
        switch answers {
        case .none: break
        case .lines(let lines):
            try lines.map { $0 + "\n" }.joined().write(toFile: base + ".fd3", atomically: false, encoding: .utf8)
            redirect = " 3<'\(base).fd3'"
        case .silence:
            try #require(mkfifo(base + ".fifo", 0o600) == 0)
            // Read-write: opening does not wait for a writer, and the only writer is the client itself.
            redirect = " 3<>'\(base).fifo'"
        }
        let script =
            "exec /usr/bin/setsid --wait /usr/bin/timeout -s KILL \(Int(timeout)) "
            + "/usr/bin/setpriv --reuid=\(uid) --regid=\(uid) --clear-groups \"$@\""
            + " <'\(base).in' >'\(base).out' 2>'\(base).err'" + redirect
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, "sh", Self.keygatePath] + arguments
        process.environment = environment(uid, extra)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(timeout + 5)
        while process.isRunning && Date() < deadline { usleep(5_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            Issue.record("keygate \(arguments) did not finish in \(timeout) s")
        }
        process.waitUntilExit()
        let read = { (suffix: String) in (try? String(contentsOfFile: base + suffix, encoding: .utf8)) ?? "" }
        let bytes = FileManager.default.contents(atPath: base + ".out").map { [UInt8]($0) } ?? []
        return Result(status: process.terminationStatus, stdout: read(".out"), stderr: read(".err"), stdoutBytes: bytes)
    }
}
