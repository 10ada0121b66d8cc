import CKeygated
import Glibc
import KeygateServing

/// The caller's controlling terminal and kernel session as the kernel reports them:
/// `/proc/<pid>/stat` fields 6 (session id) and 7 (`tty_nr`), read and then checked against the
/// connection's pidfd (the pidfd must still name that pid, so the process read is the pinned
/// caller, not a successor), plus the start time of the session's leader, so a recycled
/// leader pid is another session. Nothing a client sends or sets enters it.
struct CallerTerminal: Hashable, Sendable {
    /// The kernel's `tty_nr` (device number of the controlling terminal, never 0 here).
    let device: UInt32
    /// The kernel session id (the leader's pid).
    let sessionLeader: Int32
    /// The leader's start time (`/proc/<sid>/stat` field 22, clock ticks since boot).
    let leaderStarted: UInt64

    /// The terminal's name for `PAM_TTY`: `/dev/pts/N`, `/dev/ttyN`, `/dev/ttySN`, else
    /// `/dev/char/MAJOR:MINOR`.
    var name: String {
        let major = (device >> 8) & 0xfff
        let minor = (device & 0xff) | ((device >> 12) & 0xfff00)
        switch major {
        case 136...143: return "/dev/pts/\((major - 136) * 256 + minor)"
        case 4 where minor < 64: return "/dev/tty\(minor)"
        case 4: return "/dev/ttyS\(minor - 64)"
        default: return "/dev/char/\(major):\(minor)"
        }
    }

    /// The terminal of `pid` (pinned by `pidfd`); nil when it has none, or when anything could
    /// not be read or checked (no terminal means no proof reuse: the safe side).
    static func read(pid: Int32, pidfd: Int32) -> CallerTerminal? {
        guard let fields = statFields(pid), fields.count > 4,
            let session = Int32(fields[3]), session > 0,
            let tty = Int32(fields[4]), tty != 0
        else { return nil }
        guard let leaderStarted = PeerIdentity.startTicks(session), PeerIdentity.pid(of: pidfd) == pid else {
            return nil
        }
        return CallerTerminal(device: UInt32(bitPattern: tty), sessionLeader: session, leaderStarted: leaderStarted)
    }

    /// The fields after the parenthesised command name (field 3 onwards).
    private static func statFields(_ pid: Int32) -> [Substring]? {
        let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = Glibc.read(fd, &buffer, buffer.count)
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[0..<count], as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }
}
