import Foundation
import Glibc
import Testing

/// A message bus of the test's own: `dbus-daemon` with a private configuration (no service
/// directory, so nothing is ever activated, gnome-keyring included), listening on a socket in
/// a temporary directory, stopped by its pid.
final class PrivateBus {
    let directory: String
    let address: String
    /// The daemon's pid (it forks away from the test: a child that closes its inherited
    /// descriptors, as dbus-daemon does, stalls Foundation's reaping of every other child).
    private var pid: Int32 = 0

    init() throws {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("keygate-bus-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        address = "unix:path=\(directory)/bus"
        let configuration = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>\(address)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
                <allow user="*"/>
              </policy>
            </busconfig>
            """
        let path = directory + "/bus.conf"
        try configuration.write(toFile: path, atomically: true, encoding: .utf8)
        pid = try Self.spawn(
            "/usr/bin/dbus-daemon", ["--config-file=\(path)", "--nofork", "--nopidfile"], environment: [:],
            output: directory + "/daemon.log")
        var listening = false
        for _ in 0..<200 {
            if access(directory + "/bus", F_OK) == 0 {
                listening = true
                break
            }
            usleep(10_000)
        }
        guard listening else {
            stop()
            throw BusSetupFailure("dbus-daemon did not listen within 2 s")
        }
    }

    func stop() {
        if pid > 0 {
            kill(pid, SIGTERM)
            if Self.wait(pid, seconds: 5) == nil {
                kill(pid, SIGKILL)
                _ = Self.wait(pid, seconds: 5)
            }
            pid = 0
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { stop() }

    /// Runs `python3 -c script arguments…` with the bus as its session bus, for at most 60 s:
    /// its status and output.
    func python(_ script: String, _ arguments: [String] = []) throws -> (status: Int32, output: String) {
        let output = directory + "/python-\(UUID().uuidString).out"
        defer { unlink(output) }
        let child = try Self.spawn(
            "/usr/bin/python3", ["-c", script] + arguments,
            environment: ["DBUS_SESSION_BUS_ADDRESS": address, "PATH": "/usr/bin:/bin"], output: output)
        let status = Self.wait(child, seconds: 60)
        if status == nil {
            kill(child, SIGKILL)
            _ = Self.wait(child, seconds: 5)
        }
        return (status ?? -1, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }

    // Children are spawned and reaped here, not through Foundation's `Process`: dbus-daemon
    // closes every descriptor it inherits, which stalls `Process`'s reaping of every child.

    /// Spawns `path arguments…` with `environment`, both output streams to the file `output`.
    static func spawn(_ path: String, _ arguments: [String], environment: [String: String], output: String)
        throws -> Int32
    {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        // The child starts with no signal blocked and every signal at its default (a test
        // thread's mask would otherwise keep SIGTERM from stopping it).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw BusSetupFailure("\(path) could not be started (errno \(spawned))") }
        return pid
    }

    /// Waits at most `seconds` for `pid` to end: its exit status, nil when it did not end.
    static func wait(_ pid: Int32, seconds: Int) -> Int32? {
        for _ in 0..<(seconds * 100) {
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f) }
            if reaped < 0 { return -1 }
            usleep(10_000)
        }
        return nil
    }
}

struct BusSetupFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
