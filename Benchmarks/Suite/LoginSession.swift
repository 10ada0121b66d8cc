// A login session for the whole-process rows: a private D-Bus daemon with a stand-in logind
// (Benchmarks/CBaseline/logind.c, sd-bus on a thread of this process) that answers LockedHint
// for session 1, so `keygate get` in a session asks and waits for the lock state as it does on a
// desktop, where the system bus and logind answer.

import Foundation
import Glibc
import KeygateBenchC

/// A running private bus with a logind on it; ``stop()`` (or deinit) ends the bus and removes
/// its directory.
final class LoginSession {
    /// The session logind knows (the `XDG_SESSION_ID` to run with).
    let sessionID = "1"
    /// `DBUS_SYSTEM_BUS_ADDRESS` for the runs.
    let address: String

    /// How many lock-state questions the stand-in logind has answered so far.
    var answered: Int { Int(kb_logind_answered()) }
    private let directory: String
    private var daemon: Child?

    /// Starts `dbus-daemon` and the stand-in logind; nil, with the reason in `failure`, when either
    /// cannot start (no dbus-daemon installed, a bus that never listens).
    init?(failure: inout String) {
        guard installed("dbus-daemon") else {
            failure = "dbus-daemon not installed"
            return nil
        }
        directory = temporaryDirectory("session-bus")
        let socket = directory + "/bus"
        address = "unix:path=" + socket
        let configuration = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <listen>\(address)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_destination="*"/>
                <allow receive_sender="*"/>
              </policy>
            </busconfig>

            """
        let configurationPath = directory + "/bus.conf"
        guard FileManager.default.createFile(atPath: configurationPath, contents: Data(configuration.utf8)),
            let daemon = start(["dbus-daemon", "--config-file=" + configurationPath, "--nofork"], ownGroup: true)
        else {
            failure = "dbus-daemon did not start"
            removeTree(directory)
            return nil
        }
        self.daemon = daemon
        // The socket file appears at bind, a moment before the bus listens: tried for up to 5 s.
        var started = -ETIMEDOUT
        for _ in 0..<500 {
            started = access(socket, F_OK) == 0 ? kb_logind_start(address, sessionID) : -ENOENT
            if started != -ECONNREFUSED && started != -ENOENT { break }
            usleep(10_000)
        }
        guard started == 0 else {
            failure = "the stand-in logind did not start (\(String(cString: strerror(-started))))"
            stop()
            return nil
        }
    }

    /// Ends the bus (the stand-in logind's thread ends with it) and removes the directory.
    func stop() {
        if let daemon {
            kill(-daemon.pid, SIGKILL)
            _ = daemon.wait(sampleMemory: false)
            self.daemon = nil
        }
        removeTree(directory)
    }

    deinit { stop() }
}
