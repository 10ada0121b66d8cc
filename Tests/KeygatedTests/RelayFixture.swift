import Foundation
import Glibc
import Testing

/// A ``DaemonFixture`` whose daemon authenticates through PAM: pam_wrapper with pam_matrix
/// services `keygate` and `keygate-biometry` in a throwaway service directory (an `other`
/// that denies), and nss_wrapper so the client uids have user names (`kgrelaya` 61001,
/// `kgrelayb` 61002); both wrappers are in the daemon's environment only (LD_PRELOAD), so
/// nothing on the machine changes and the test process keeps its own libpam and passwd.
/// The `keygate` service also requires `PAM_RUSER` to be one of those names
/// (`pam_succeed_if ruser in …`), so every proof in these tests shows the daemon described
/// its caller. Device state is `unlocked`.
final class RelayFixture {
    static let passwords: [UInt32: String] = [DaemonFixture.userA: "pass-a", DaemonFixture.userB: "pass-b"]
    static let names: [UInt32: String] = [DaemonFixture.userA: "kgrelaya", DaemonFixture.userB: "kgrelayb"]
    static let modules = "/usr/lib/x86_64-linux-gnu/pam_wrapper"

    let daemon: DaemonFixture

    /// A daemon with `extra` configuration lines (after `device-state = DEVICESTATE`).
    /// With `chatty`, the `keygate` service first sends one info and one error message (pam_chatty).
    init(config extra: String = "", deviceState: String = "unlocked", chatty: Bool = false) throws {
        daemon = try DaemonFixture(config: "device-state = \(deviceState)\n" + extra)
        let pam = daemon.directory + "/pam"
        let services = pam + "/services"
        try FileManager.default.createDirectory(atPath: services, withIntermediateDirectories: true)
        var passdb = ""
        var passwd = "root:x:0:0:root:/root:/bin/sh\n"
        var group = "root:x:0:\n"
        for (uid, name) in Self.names.sorted(by: { $0.key < $1.key }) {
            passdb += "\(name):\(Self.passwords[uid]!):keygate\n"
            passwd += "\(name):x:\(uid):\(uid):relay test:/nonexistent:/bin/false\n"
            group += "\(name):x:\(uid):\n"
        }
        let users = Self.names.values.sorted().joined(separator: ":")
        try passdb.write(toFile: pam + "/passdb", atomically: true, encoding: .utf8)
        try passwd.write(toFile: pam + "/passwd", atomically: true, encoding: .utf8)
        try group.write(toFile: pam + "/group", atomically: true, encoding: .utf8)
        let matrix =
            "auth required \(Self.modules)/pam_matrix.so passdb=\(pam)/passdb\n"
            + "account required \(Self.modules)/pam_matrix.so passdb=\(pam)/passdb\n"
        let messages = chatty ? "auth required \(Self.modules)/pam_chatty.so num_lines=1 info error\n" : ""
        try ("auth requisite pam_succeed_if.so quiet ruser in \(users)\n" + messages + matrix)
            .write(toFile: services + "/keygate", atomically: true, encoding: .utf8)
        try "auth required pam_deny.so\naccount required pam_deny.so\n"
            .write(toFile: services + "/other", atomically: true, encoding: .utf8)
        daemon.environment = [
            "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
            "LD_PRELOAD": "libpam_wrapper.so libnss_wrapper.so",
            "PAM_WRAPPER": "1",
            "PAM_WRAPPER_SERVICE_DIR": services,
            "NSS_WRAPPER_PASSWD": pam + "/passwd",
            "NSS_WRAPPER_GROUP": pam + "/group",
        ]
    }

    /// Stops the daemon and removes the runtime directories pam_wrapper made for this fixture's
    /// daemons (`/tmp/pam.X` holding a copy of this fixture's services): a daemon stopped by a
    /// signal never removes its own, and pam_wrapper's reuse of stale slots races between
    /// processes starting at the same time.
    deinit {
        daemon.stop()
        let mine = daemon.directory + "/pam/"
        for slot in (try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? [] where slot.hasPrefix("pam.") {
            let path = "/tmp/" + slot
            guard let service = try? String(contentsOfFile: path + "/keygate", encoding: .utf8),
                service.contains(mine)
            else { continue }
            if let pid = (try? String(contentsOfFile: path + "/pid", encoding: .utf8)).flatMap({
                Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }), kill(pid, 0) == 0 {
                continue
            }
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// Adds a `userPresence` item `service`/`account` = `value` for `uid`.
    func addGated(as uid: UInt32, _ service: String, _ account: String, _ value: String) throws {
        #expect(try daemon.probe(as: uid, "add", service, account, value, "presence").lines == ["ok"])
    }

    /// `keygated-probe SOCKET relay MODE SERVICE ACCOUNT [ANSWER]` as `uid`, waited for (30 s at most).
    func relay(as uid: UInt32, _ mode: String, _ service: String, _ account: String, answer: String? = nil) throws
        -> DaemonFixture.Result
    {
        try daemon.run(
            as: uid, DaemonFixture.probePath,
            [daemon.socket, "relay", mode, service, account] + (answer.map { [$0] } ?? []))
    }

    /// A relay probe running in the background as `uid`; read its output with ``Background/output``.
    func background(as uid: UInt32, _ mode: String, _ service: String, _ account: String, answer: String? = nil)
        throws -> Background
    {
        let output = daemon.directory + "/background-\(UUID().uuidString).out"
        let process = try DaemonFixture.launch(
            "/usr/bin/setpriv",
            [
                "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", DaemonFixture.probePath, daemon.socket, "relay",
                mode,
                service, account,
            ] + (answer.map { [$0] } ?? []),
            output: output)
        return Background(process: process, outputPath: output)
    }

    /// A client process running in the background.
    final class Background {
        let process: Process
        let outputPath: String

        init(process: Process, outputPath: String) {
            self.process = process
            self.outputPath = outputPath
        }

        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            unlink(outputPath)
        }

        var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

        /// Waits (up to `timeout` s) until the output contains `text`; false when it never does.
        func wait(for text: String, timeout: Double = 15) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while !output.contains(text) {
                guard Date() < deadline, process.isRunning else { return output.contains(text) }
                usleep(10_000)
            }
            return true
        }

        /// Waits (up to `timeout` s) for the process to exit; its status, or nil when it did not.
        func finish(timeout: Double = 30) -> Int32? {
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            guard !process.isRunning else { return nil }
            process.waitUntilExit()
            return process.terminationStatus
        }
    }
}
