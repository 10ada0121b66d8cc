import Foundation
import Glibc
import Testing

/// keygated started as `keygate.socket` starts it (sd_listen_fds(3)): a small Python wrapper
/// makes fd 3, sets `LISTEN_FDS` and `LISTEN_PID` and execs the daemon, which keeps the
/// wrapper's pid, so `LISTEN_PID` is the daemon's own pid unless a test says otherwise. Every
/// wait has a deadline and every started daemon is killed on every path.
@Suite struct SocketActivationTests {
    /// What the wrapper puts on fd 3.
    enum Descriptor: String {
        case listening, unlistening, datagram, file, none
    }

    /// The wrapper: `python3 -c SCRIPT KIND SOCKET PID-MODE COUNT DAEMON ARGS…`.
    static let wrapper = """
        import os, socket, sys
        kind, path, pid_mode, count, daemon = sys.argv[1:6]
        if kind == "file":
            fd = os.open(path + ".file", os.O_RDWR | os.O_CREAT, 0o600)
        elif kind != "none":
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM if kind == "datagram" else socket.SOCK_STREAM)
            s.bind(path)
            os.chmod(path, 0o666)
            if kind == "listening":
                s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)  # PassCredentials=yes, as shipped
                s.listen(64)
            fd = s.detach()
        if kind != "none":
            if fd != 3:
                os.dup2(fd, 3)
                os.close(fd)
            os.set_inheritable(3, True)
        env = dict(os.environ)
        env["LISTEN_FDS"] = count
        env["LISTEN_PID"] = str(os.getpid() + (1 if pid_mode == "other" else 0))
        os.execve(daemon, [daemon] + sys.argv[6:], env)
        """

    /// A daemon started through the wrapper; stopped (SIGKILL at the latest) when released.
    final class Activated {
        let process: Process
        let logPath: String
        init(_ daemon: DaemonFixture, _ descriptor: Descriptor, pid: String = "own", count: String = "1") throws {
            logPath = daemon.directory + "/activated-\(descriptor.rawValue)-\(pid)-\(count).log"
            process = try DaemonFixture.launch(
                "/usr/bin/python3",
                [
                    "-c", SocketActivationTests.wrapper, descriptor.rawValue, daemon.socket, pid, count,
                    DaemonFixture.daemonPath, "--socket", daemon.socket, "--state-directory", daemon.state,
                ], output: logPath)
        }

        deinit { stop() }

        var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

        /// Waits up to `timeout` s for the daemon to exit; its status, or nil if it still runs.
        func exitStatus(within timeout: Double) -> Int32? {
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < deadline { usleep(5_000) }
            guard !process.isRunning else { return nil }
            process.waitUntilExit()
            return process.terminationStatus
        }

        /// SIGTERM, then SIGKILL after 5 s; reaps it.
        func stop() {
            guard process.isRunning else { return }
            kill(process.processIdentifier, SIGTERM)
            if exitStatus(within: 5) == nil {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
    }

    @Test func aClientIsServedThroughTheSocketSystemdPassed() throws {
        let daemon = try DaemonFixture()
        let activated = try Activated(daemon, .listening)
        // The wrapper made the socket before the daemon ran: a client may connect at once and
        // waits in the backlog until the daemon accepts (that is what activation is for).
        let deadline = Date().addingTimeInterval(10)
        while access(daemon.socket, F_OK) != 0 && Date() < deadline && activated.process.isRunning { usleep(5_000) }
        var before = stat()
        try #require(lstat(daemon.socket, &before) == 0, "the wrapper made no socket: \(activated.log)")
        let status = try daemon.probe(as: DaemonFixture.userA, "status")
        #expect(status.lines.first?.hasPrefix("mode=daemon") == true, "\(status.output) \(activated.log)")
        #expect(try daemon.probe(as: DaemonFixture.userA, "add", "svc", "acc", "v").lines == ["ok"])
        #expect(try daemon.probe(as: DaemonFixture.userA, "get", "svc", "acc").lines == ["v"])
        #expect(activated.log.contains("listening on \(daemon.socket) (from systemd"), "\(activated.log)")
        // The daemon served systemd's socket as it was: not re-bound, not renamed.
        var after = stat()
        #expect(lstat(daemon.socket, &after) == 0 && after.st_ino == before.st_ino)
        // fd 3 is close-on-exec now (O_CLOEXEC is 02000000 in fdinfo's octal flags), so nothing
        // the daemon starts inherits it; and blocking.
        let fdinfo = try String(
            contentsOfFile: "/proc/\(activated.process.processIdentifier)/fdinfo/3", encoding: .utf8)
        let flagsLine = try #require(fdinfo.split(separator: "\n").first { $0.hasPrefix("flags:") })
        let flags = try #require(
            Int(flagsLine.dropFirst("flags:".count).trimmingCharacters(in: .whitespaces), radix: 8))
        #expect(flags & 0o2_000_000 != 0, "fd 3 not close-on-exec: \(flagsLine)")
        #expect(flags & Int(O_NONBLOCK) == 0, "fd 3 left non-blocking: \(flagsLine)")
        activated.stop()
        #expect(activated.exitStatus(within: 1) != nil, "keygated ignored SIGTERM")
    }

    /// Each case: the daemon exits 78 (EX_CONFIG) at once, says why, and never binds the path
    /// itself (the wrapper's socket, if any, is the only thing there).
    @Test(arguments: [
        (Descriptor.listening, "other", "1", "LISTEN_PID="),
        (Descriptor.listening, "own", "2", "LISTEN_FDS='2'"),
        (Descriptor.file, "own", "1", "fd 3 is not a socket"),
        (Descriptor.datagram, "own", "1", "not a listening AF_UNIX stream socket"),
        (Descriptor.unlistening, "own", "1", "not a listening AF_UNIX stream socket"),
        (Descriptor.none, "own", "1", "fd 3 is not open"),
    ])
    func aWrongActivationRefusesToStart(descriptor: Descriptor, pid: String, count: String, message: String) throws {
        let daemon = try DaemonFixture()
        let activated = try Activated(daemon, descriptor, pid: pid, count: count)
        let status = activated.exitStatus(within: 10)
        #expect(status == 78, "still running or wrong status: \(activated.log)")
        #expect(activated.log.contains(message), "\(activated.log)")
        #expect(activated.log.contains("refusing to start"), "\(activated.log)")
        if descriptor == .none || descriptor == .file {
            #expect(access(daemon.socket, F_OK) != 0, "the daemon bound --socket itself")
        }
    }
}
