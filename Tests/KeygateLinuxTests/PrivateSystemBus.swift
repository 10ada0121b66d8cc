import Foundation
import Glibc
import KeygateProtocol

/// A private D-Bus daemon in a temporary directory, optionally with a mock logind
/// (`org.freedesktop.login1`) whose sessions have the given `LockedHint`s. Everything it
/// started is stopped, and the directory removed, by ``stop()`` or at deinit.
final class PrivateSystemBus {
    let directory: String
    private(set) var address = ""
    private var processes: [Process] = []

    /// Starts `dbus-daemon` with a configuration that allows everything on a socket in a
    /// temporary directory. With `unstartableLogind`, the bus knows a logind service that it
    /// fails to start (its command is `/bin/false`), like a system bus without systemd.
    init(unstartableLogind: Bool = false) throws {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("keygate-bus-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory + "/services", withIntermediateDirectories: true)
        if unstartableLogind {
            try "[D-BUS Service]\nName=org.freedesktop.login1\nExec=/bin/false\n".write(
                toFile: directory + "/services/org.freedesktop.login1.service", atomically: true, encoding: .utf8)
        }
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <listen>unix:path=\(directory)/bus</listen>
              <auth>EXTERNAL</auth>
              <servicedir>\(directory)/services</servicedir>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_destination="*"/>
                <allow receive_sender="*"/>
              </policy>
            </busconfig>
            """
        try config.write(toFile: directory + "/bus.conf", atomically: true, encoding: .utf8)
        do {
            // Through python3 to unblock every signal first: a process started from a test's
            // thread inherits its blocked signals, and a dbus-daemon with SIGCHLD blocked never
            // sees a service it started exit.
            let line = try start(
                "/usr/bin/python3",
                [
                    "-c",
                    "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])",
                    "/usr/bin/dbus-daemon", "--config-file=\(directory)/bus.conf", "--print-address", "--nofork",
                ],
                environment: [:], quiet: true)
            address = line.trimmingCharacters(in: .whitespacesAndNewlines)
            guard address.hasPrefix("unix:") else { throw BusError("dbus-daemon printed no address") }
        } catch {
            stop()
            throw error
        }
    }

    /// Starts a mock logind on the bus: `sessions` maps a session id to what its `LockedHint`
    /// answers: `"true"`, `"false"`, `"error"` (an `AccessDenied` error reply) or anything else
    /// (that text, a reply of the wrong type).
    func startLogind(sessions: [String: String]) throws {
        let script = directory + "/logind.py"
        try Self.mockLogind.write(toFile: script, atomically: true, encoding: .utf8)
        let line = try start(
            "/usr/bin/python3", [script] + sessions.map { "\($0.key)=\($0.value)" },
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": address])
        guard line == "ready\n" else { throw BusError("the mock logind did not start: \(line)") }
    }

    /// Starts a mock fprintd (`net.reactivated.Fprint`) on the bus. `readers` are (name, scan
    /// type, fingers of every user); `answer` is `"ok"`, `"error"` (every call gets an
    /// `net.reactivated.Fprint.Error.Internal` reply) or `"silent"` (no call is ever answered).
    /// Every call it receives is appended, one line each, to ``fprintdCalls``.
    func startFprintd(readers: [(name: String, scanType: String, fingers: [String])], answer: String = "ok") throws {
        let script = directory + "/fprintd.py"
        try Self.mockFprintd.write(toFile: script, atomically: true, encoding: .utf8)
        let arguments = readers.map { "\($0.name)|\($0.scanType)|\($0.fingers.joined(separator: ","))" }
        let line = try start(
            "/usr/bin/python3", [script, fprintdCalls, answer] + arguments,
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": address])
        guard line == "ready\n" else { throw BusError("the mock fprintd did not start: \(line)") }
    }

    /// The file where the mock fprintd writes one line per call it receives.
    var fprintdCalls: String { directory + "/fprintd-calls" }

    /// Stops every process started here and removes the directory.
    func stop() {
        for process in processes where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        processes = []
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { stop() }

    /// Starts `tool` and returns the first line it prints (empty when it exits first).
    /// A quiet tool's standard error is discarded (dbus-daemon complains it cannot raise its fd limit).
    private func start(
        _ tool: String, _ arguments: [String], environment: [String: String], quiet: Bool = false
    ) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.environment = environment.merging(["PATH": "/usr/bin:/bin"]) { first, _ in first }
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        if quiet { process.standardError = FileHandle.nullDevice }
        try process.run()
        processes.append(process)
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        return String(decoding: line, as: UTF8.self)
    }

    struct BusError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The mock: dbus-python (Debian python3-dbus) with GLib's main loop (python3-gi). It
    /// answers `org.freedesktop.DBus.Properties.Get` under `/org/freedesktop/login1/session/`
    /// like logind (an unknown session is `UnknownObject`), and `GetAll` and the manager's
    /// `GetSession`, which `loginctl` asks.
    static let mockLogind = #"""
        import re, sys
        import dbus, dbus.service, dbus.mainloop.glib
        from gi.repository import GLib

        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        sessions = dict(arg.split("=", 1) for arg in sys.argv[1:])

        def decode(label):
            return re.sub(r"_([0-9a-f]{2})", lambda m: chr(int(m.group(1), 16)), label)

        class Sessions(dbus.service.FallbackObject):
            @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="ss", out_signature="v",
                                 rel_path_keyword="rel")
            def Get(self, interface, name, rel):
                session = decode(rel.lstrip("/"))
                if session not in sessions:
                    raise dbus.exceptions.DBusException(
                        "no session " + rel, name="org.freedesktop.DBus.Error.UnknownObject")
                if interface != "org.freedesktop.login1.Session" or name != "LockedHint":
                    raise dbus.exceptions.DBusException(
                        "no property " + name, name="org.freedesktop.DBus.Error.UnknownProperty")
                answer = sessions[session]
                if answer == "error":
                    raise dbus.exceptions.DBusException(
                        "denied", name="org.freedesktop.DBus.Error.AccessDenied")
                if answer in ("true", "false"):
                    return dbus.Boolean(answer == "true")
                return dbus.String(answer)

            @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="s", out_signature="a{sv}",
                                 rel_path_keyword="rel")
            def GetAll(self, interface, rel):
                return {"LockedHint": self.Get("org.freedesktop.login1.Session", "LockedHint", rel)}

        class Manager(dbus.service.Object):
            @dbus.service.method("org.freedesktop.login1.Manager", in_signature="s", out_signature="o")
            def GetSession(self, session):
                if session not in sessions:
                    raise dbus.exceptions.DBusException(
                        "no session " + session, name="org.freedesktop.login1.NoSuchSession")
                label = "".join(c if c.isascii() and c.isalnum() and not (i == 0 and c.isdigit())
                                else "_%02x" % ord(c) for i, c in enumerate(session))
                return dbus.ObjectPath("/org/freedesktop/login1/session/" + label)

        bus = dbus.SystemBus()
        name = dbus.service.BusName("org.freedesktop.login1", bus)
        Sessions(bus, "/org/freedesktop/login1/session")
        Manager(bus, "/org/freedesktop/login1")
        print("ready", flush=True)
        GLib.MainLoop().run()
        """#
}

extension PrivateSystemBus {
    /// The fprintd mock: the manager's `GetDevices`, and per reader the `name` and `scan-type`
    /// properties and `ListEnrolledFingers` (no finger is `NoEnrolledPrints`, as fprintd answers).
    static let mockFprintd = #"""
        import sys
        import dbus, dbus.service, dbus.mainloop.glib
        from gi.repository import GLib

        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        calls, answer = sys.argv[1], sys.argv[2]
        readers = [arg.split("|") for arg in sys.argv[3:]]

        def called(name):
            with open(calls, "a") as log:
                log.write(name + "\n")
            if answer == "error":
                raise dbus.exceptions.DBusException("broken", name="net.reactivated.Fprint.Error.Internal")

        class Reader(dbus.service.Object):
            def __init__(self, bus, path, name, scan_type, fingers):
                super().__init__(bus, path)
                self.name, self.scan_type = name, scan_type
                self.fingers = [f for f in fingers.split(",") if f]

            @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="ss", out_signature="v",
                                 async_callbacks=("reply", "error"))
            def Get(self, interface, name, reply, error):
                called("Get " + name)
                if answer == "silent":
                    return
                reply(dbus.String({"name": self.name, "scan-type": self.scan_type}[name]))

            @dbus.service.method("net.reactivated.Fprint.Device", in_signature="s", out_signature="as",
                                 async_callbacks=("reply", "error"))
            def ListEnrolledFingers(self, user, reply, error):
                called("ListEnrolledFingers " + user)
                if answer == "silent":
                    return
                if not self.fingers:
                    error(dbus.exceptions.DBusException(
                        "no prints", name="net.reactivated.Fprint.Error.NoEnrolledPrints"))
                    return
                reply(dbus.Array(self.fingers, signature="s"))

        class Manager(dbus.service.Object):
            @dbus.service.method("net.reactivated.Fprint.Manager", in_signature="", out_signature="ao",
                                 async_callbacks=("reply", "error"))
            def GetDevices(self, reply, error):
                called("GetDevices")
                if answer == "silent":
                    return
                reply(dbus.Array([dbus.ObjectPath("/net/reactivated/Fprint/Device/%d" % i)
                                  for i in range(len(readers))], signature="o"))

        bus = dbus.SystemBus()
        name = dbus.service.BusName("net.reactivated.Fprint", bus)
        Manager(bus, "/net/reactivated/Fprint/Manager")
        kept = [Reader(bus, "/net/reactivated/Fprint/Device/%d" % i, *reader) for i, reader in enumerate(readers)]
        print("ready", flush=True)
        GLib.MainLoop().run()
        """#
}

/// Runs a question on a thread of its own and waits a bounded time for the answer, so a hang
/// fails a test instead of stalling it.
final class OnThread<Value: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var value: Value?

    /// `body`'s value, or nil when it has not returned within `seconds`.
    static func value(within seconds: Double, _ body: @escaping @Sendable () -> Value) -> Value? {
        let box = OnThread()
        Thread {
            box.value = body()
            box.done.signal()
        }.start()
        return box.done.wait(timeout: .now() + seconds) == .success ? box.value : nil
    }
}

/// A Unix stream socket bound to `path` and listening (a backlog of `backlog`).
func listeningUnixSocket(path: String, backlog: Int32) throws -> Int32 {
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw PrivateSystemBus.BusError("socket: errno \(errno)") }
    let bound = UnixSocketAddress(path: path)?.bind(descriptor) ?? -1
    guard bound == 0, listen(descriptor, backlog) == 0 else {
        close(descriptor)
        throw PrivateSystemBus.BusError("bind/listen: errno \(errno)")
    }
    return descriptor
}

/// A Unix socket that accepts connections (the kernel's backlog) and never says a word: a
/// bus that never answers.
final class SilentSocket {
    let path: String
    private let descriptor: Int32

    init(directory: String) throws {
        path = directory + "/silent"
        descriptor = try listeningUnixSocket(path: path, backlog: 16)
    }

    deinit { close(descriptor) }
}
