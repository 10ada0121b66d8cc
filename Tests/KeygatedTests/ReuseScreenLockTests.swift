import Foundation
import Glibc
import Testing

/// A remembered proof never outlives a screen lock the daemon sees (issue 15 point 3), even
/// when the screen is unlocked again before the next request: the daemon asks logind itself
/// (`device-state = logind`), here a mock logind on a private system bus named in the
/// daemon's own environment, whose `LockedHint` the test flips through a file.
@Suite struct ReuseScreenLockTests {
    let a = DaemonFixture.userA

    /// A private dbus-daemon and a mock logind answering every session's `LockedHint` from
    /// `lockFile` ("true" or "false"); both stopped at deinit.
    final class MockLogind {
        let directory: String
        let lockFile: String
        private(set) var address = ""
        private var processes: [Process] = []

        init(directory: String) throws {
            self.directory = directory
            lockFile = directory + "/locked"
            try "false".write(toFile: lockFile, atomically: true, encoding: .utf8)
            try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <listen>unix:path=\(directory)/bus</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/><allow own="*"/><allow send_destination="*"/><allow receive_sender="*"/>
              </policy>
            </busconfig>
            """.write(toFile: directory + "/bus.conf", atomically: true, encoding: .utf8)
            address = try start(
                "/usr/bin/dbus-daemon", ["--config-file=\(directory)/bus.conf", "--print-address", "--nofork"], [:]
            )
            .trimmingCharacters(in: .whitespacesAndNewlines)
            try #require(address.hasPrefix("unix:"), "dbus-daemon printed no address")
            try Self.script.write(toFile: directory + "/logind.py", atomically: true, encoding: .utf8)
            let ready = try start(
                "/usr/bin/python3", [directory + "/logind.py", lockFile], ["DBUS_SYSTEM_BUS_ADDRESS": address])
            try #require(ready == "ready\n", "the mock logind did not start: \(ready)")
        }

        deinit {
            for process in processes.reversed() where process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }

        func setLocked(_ locked: Bool) throws {
            try (locked ? "true" : "false").write(toFile: lockFile, atomically: true, encoding: .utf8)
        }

        /// Starts `tool` and returns the first line it prints (within 10 s).
        private func start(_ tool: String, _ arguments: [String], _ environment: [String: String]) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
            process.environment = environment.merging(["PATH": "/usr/bin:/bin"]) { first, _ in first }
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
            processes.append(process)
            let handle = output.fileHandleForReading
            var line = Data()
            let deadline = Date().addingTimeInterval(10)
            while !line.contains(UInt8(ascii: "\n")) && Date() < deadline {
                var poller = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 100) >= 0 else { break }
                if poller.revents == 0 { continue }
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                line.append(chunk)
            }
            return String(decoding: line, as: UTF8.self)
        }

        /// Every session exists; `LockedHint` is what the lock file says at each call.
        static let script = #"""
            import sys
            import dbus, dbus.service, dbus.mainloop.glib
            from gi.repository import GLib

            dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
            lock_file = sys.argv[1]

            class Sessions(dbus.service.FallbackObject):
                @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="ss", out_signature="v",
                                     rel_path_keyword="rel")
                def Get(self, interface, name, rel):
                    with open(lock_file) as f:
                        return dbus.Boolean(f.read().strip() == "true")

            class Manager(dbus.service.Object):
                @dbus.service.method("org.freedesktop.login1.Manager", in_signature="s", out_signature="o")
                def GetSession(self, session):
                    return dbus.ObjectPath("/org/freedesktop/login1/session/_" + session.encode().hex())

            bus = dbus.SystemBus()
            name = dbus.service.BusName("org.freedesktop.login1", bus)
            Sessions(bus, "/org/freedesktop/login1/session")
            Manager(bus, "/org/freedesktop/login1")
            print("ready", flush=True)
            GLib.MainLoop().run()
            """#
    }

    @Test func aScreenLockBetweenTwoRequestsEndsReuseEvenAfterTheUnlock() throws {
        let world = try RelayFixture(deviceState: "logind")
        let logind = try MockLogind(directory: world.daemon.directory)
        world.daemon.environment?["DBUS_SYSTEM_BUS_ADDRESS"] = logind.address
        try world.daemon.start()
        try world.addGated(as: a, "gated", "me", "a-value")
        let terminal = try ReuseTerminal(
            uid: a, session: ReuseTests.sessionCounter.next(), directory: world.daemon.directory)
        let prove = ["relay", "answer", "gated", "me", "pass-a", "60"]
        let reread = ["relay", "cancel", "gated", "me", "-", "60"]
        let before = try terminal.run(as: a, socket: world.daemon.socket, [prove, reread])
        #expect(before[0].lines.last == "a-value", "\(before[0].output)")
        #expect(before[1].lines == ["a-value"], "reused while unlocked: \(before[1].output)")
        try logind.setLocked(true)
        usleep(2_500_000)  // the daemon's watcher looks once a second
        try logind.setLocked(false)
        let after = try terminal.run(as: a, socket: world.daemon.socket, [reread])
        #expect(after[0].lines.first?.hasPrefix("prompt 1 ") == true, "\(after[0].output)\n\(world.daemon.log)")
        #expect(after[0].lines.last?.hasPrefix("error -128") == true, "\(after[0].output)")
        #expect(world.daemon.log.contains("is locked; its proofs are forgotten"), "\(world.daemon.log)")
    }
}
