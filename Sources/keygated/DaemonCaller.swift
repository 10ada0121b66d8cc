import KeygateServing
import Synchronization

/// The process behind one request, as the kernel described it: its identity (uid, gid, pid,
/// executable, logind session, whether it shares the daemon's namespaces: ``PeerIdentity``),
/// the pidfd that pins it, and its controlling terminal, read from the kernel at most once per
/// request and only when a proof needs it (a plain request costs no `/proc` read).
final class DaemonCaller: Sendable {
    /// Who the caller is.
    let identity: PeerIdentity
    /// The kernel's pin on the caller (owned by its connection).
    let pidfd: Int32
    /// The terminal once read (nil inside: read, none).
    private let terminalRead = Mutex<CallerTerminal??>(nil)

    /// The caller pinned by `pidfd`.
    init(identity: PeerIdentity, pidfd: Int32) {
        self.identity = identity
        self.pidfd = pidfd
    }

    /// The caller's controlling terminal (``CallerTerminal/read(pid:pidfd:)``): nil when it has
    /// none or it could not be checked. Read once; later questions of the request get the same answer.
    var terminal: CallerTerminal? {
        terminalRead.withLock { read in
            if let known = read { return known }
            let terminal = CallerTerminal.read(pid: identity.pid, pidfd: pidfd)
            read = .some(terminal)
            return terminal
        }
    }
}
