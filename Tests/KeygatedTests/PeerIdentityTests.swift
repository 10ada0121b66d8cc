import CPeer
import Foundation
import Glibc
import Testing

@testable import KeygateServing

/// The two places where a peer that exits could be taken for another process: a failed
/// `SO_PEERPIDFD` (only a kernel without the option may fall back to `pidfd_open(pid)`), and
/// what is read by pid number after the pidfd was taken (checked against the pidfd afterwards).
@Suite struct PeerIdentityTests {
    /// `ENOPROTOOPT` (before Linux 6.5) falls back; `EINVAL` (a kernel that knows the option, whose
    /// peer has exited) and every other failure refuse the connection.
    @Test func onlyAKernelWithoutTheOptionFallsBackToPidfdOpen() {
        #expect(PeerIdentity.peerPidfdUnsupported(errno: ENOPROTOOPT))
        for code in [EINVAL, ESRCH, ENOENT, ENODATA, EPROTO, EOPNOTSUPP, ENOMEM, EMFILE] {
            #expect(!PeerIdentity.peerPidfdUnsupported(errno: code), "errno \(code)")
        }
    }

    /// What is read by pid (executable, session) counts only when the pidfd still names the pid
    /// afterwards: a process that exits and is reaped while it is read is refused.
    @Test func aPeerThatExitsWhileItIsReadIsRefused() throws {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sleep")
        child.arguments = ["60"]
        try child.run()
        defer { if child.isRunning { kill(child.processIdentifier, SIGKILL) } }
        let pid = child.processIdentifier
        let pidfd = keygate_pidfd_open(pid)
        try #require(pidfd >= 0)
        defer { close(pidfd) }
        #expect(try PeerIdentity.readPinned(pid: pid, pidfd: pidfd) { "read while alive" } == "read while alive")
        let refused = #expect(throws: PeerIdentityError.self) {
            try PeerIdentity.readPinned(pid: pid, pidfd: pidfd) { () -> String? in
                kill(pid, SIGKILL)
                child.waitUntilExit()  // reaped: the pid is free for another process now
                return "read from whatever has the pid now"
            }
        }
        #expect(refused?.description.contains("exited") == true)
        // Nothing read (no executable) is refused too.
        #expect(throws: PeerIdentityError.self) {
            try PeerIdentity.readPinned(pid: getpid(), pidfd: pidfd) { nil as String? }
        }
    }
}
