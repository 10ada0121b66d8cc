internal import CPeer
import Glibc

/// Who is on the other end of a connection, from the kernel only; nothing a client sends
/// can change it.
///
/// - uid, gid, pid: `SO_PEERCRED`, recorded by the kernel at `connect()`.
/// - pidfd: `SO_PEERPIDFD` (Linux ≥ 6.5), the kernel's pin on that very process. Only a kernel
///   that does not know the option (`ENOPROTOOPT`, before 6.5) falls back; any other failure
///   (`EINVAL`/`ESRCH`: the peer has already exited) refuses the connection, since the
///   fallback's pid may by then name another process. The fallback is `pidfd_open(pid)`,
///   which could name a *new* process if the caller exited and its pid was reused before the
///   call; so the fallback then re-checks the peer:
///   the process the pidfd names must have started no later than the connection was accepted
///   (`/proc/<pid>/stat` start time against `CLOCK_BOOTTIME`, in clock ticks), and the peer
///   credentials must read the same again. A pid that was recycled belongs to a process
///   started after the caller exited, hence after `accept()`, and is refused.
/// - executable and session: `/proc/<pid>/exe` (trusted for grants only when the caller shares
///   the daemon's mount, pid and user namespaces, ``program``) and the pid's logind session, both read by pid
///   number and then checked against the pidfd (it must still name that pid: the pidfd holds
///   the pid until the process is reaped, so what was read is the pinned process, not a
///   successor that reused its pid).
///
/// Anything that cannot be established refuses the connection (fail closed).
public struct PeerIdentity: Sendable {
    public let uid: UInt32
    public let gid: UInt32
    public let pid: Int32
    public let executable: String
    /// The executable as a grant may name it: ``executable`` when the caller is in the daemon's
    /// own mount, pid and user namespaces, nil otherwise. In a mount namespace of its own any
    /// file can sit at any path (a user namespace lets an unprivileged caller mount its own
    /// program over a granted one); in a user and pid namespace of its own a process may name
    /// any other process of that namespace as the sender of its bytes (`SCM_CREDENTIALS`), so
    /// the opener check proves nothing about who wrote them. Either way the path matches no grant.
    public let program: String?
    /// "SO_PEERPIDFD" or "pidfd_open".
    public let pidfdSource: String
    /// The caller's logind session, when it has one.
    public let session: String?

    /// Establishes the identity of the peer of `socket`, accepted at `acceptedTicks`
    /// (``acceptedNow()``); `forceFallback` skips `SO_PEERPIDFD` (tests of the fallback);
    /// `session` reads a pid's login session (read, like the executable, while the pidfd pins
    /// the process), nil for a frontend that needs none.
    /// - Returns: the identity, and the pidfd (owned by the caller, closed with the connection).
    public static func establish(
        socket: Int32, acceptedTicks: UInt64, forceFallback: Bool = false,
        session: (@Sendable (Int32) -> String?)? = nil
    ) throws(PeerIdentityError) -> (PeerIdentity, Int32) {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
        guard keygate_peer_credentials(socket, &pid, &uid, &gid) == 0, pid > 0 else {
            throw PeerIdentityError("no peer credentials (errno \(errno))")
        }
        var source = "SO_PEERPIDFD"
        var pidfd: Int32 = forceFallback ? -1 : keygate_peer_pidfd(socket)
        if pidfd < 0 {
            let code = errno
            if !forceFallback && !peerPidfdUnsupported(errno: code) {
                throw PeerIdentityError("SO_PEERPIDFD failed (errno \(code)); the caller may have exited")
            }
            source = "pidfd_open"
            pidfd = keygate_pidfd_open(pid)
            guard pidfd >= 0 else { throw PeerIdentityError("pidfd_open(\(pid)) failed (errno \(errno))") }
            do throws(PeerIdentityError) {
                try recheck(socket: socket, pidfd: pidfd, pid: pid, uid: uid, gid: gid, acceptedTicks: acceptedTicks)
            } catch {
                close(pidfd)
                throw error
            }
        }
        let read: (executable: String, session: String?, sameMounts: Bool)
        do throws(PeerIdentityError) {
            read = try readPinned(pid: pid, pidfd: pidfd) { () -> (String, String?, Bool)? in
                guard let executable = readLink("/proc/\(pid)/exe") else { return nil }
                return (executable, session?(pid), sharesNamespaces(pid))
            }
        } catch {
            close(pidfd)
            throw error
        }
        let identity = PeerIdentity(
            uid: uid, gid: gid, pid: pid, executable: read.executable,
            program: read.sameMounts ? read.executable : nil, pidfdSource: source, session: read.session)
        return (identity, pidfd)
    }

    /// Whether the pinned process still runs ``executable`` (read again by pid, then checked
    /// against `pidfd`): false once it has `exec`ed another program, or has exited.
    public func stillRuns(pidfd: Int32) -> Bool {
        let now = try? Self.readPinned(pid: pid, pidfd: pidfd) { Self.readLink("/proc/\(pid)/exe") }
        return now == executable
    }

    /// True when a failed `SO_PEERPIDFD` with `errno` means the kernel does not know the option
    /// (`ENOPROTOOPT`, before Linux 6.5), the only case the `pidfd_open` fallback may follow.
    /// `EINVAL` from a kernel that knows it means the peer has exited (no thread-group task to
    /// pin): its pid may already be another process's, so that, like anything else, refuses.
    static func peerPidfdUnsupported(errno code: Int32) -> Bool { code == ENOPROTOOPT }

    /// Runs `reads` (what is read about the peer by its pid number), then checks that `pidfd`
    /// still names `pid`: a pidfd keeps its pid from being reused until the process is reaped, so
    /// when it still names it, everything `reads` saw was the pinned process's.
    /// - Throws: ``PeerIdentityError`` when `reads` found nothing (nil) or the process was gone
    ///   after it (its pid may have been reused while it read).
    static func readPinned<T>(pid: Int32, pidfd: Int32, _ reads: () -> T?) throws(PeerIdentityError) -> T {
        let value = reads()
        guard keygate_pidfd_pid(pidfd) == pid else {
            throw PeerIdentityError("process \(pid) exited while its executable and session were read")
        }
        guard let value else { throw PeerIdentityError("cannot read the executable of process \(pid)") }
        return value
    }

    /// The fallback's re-check (see the type's documentation).
    private static func recheck(
        socket: Int32, pidfd: Int32, pid: Int32, uid: UInt32, gid: UInt32, acceptedTicks: UInt64
    ) throws(PeerIdentityError) {
        guard let started = startTicks(pid) else { throw PeerIdentityError("cannot read /proc/\(pid)/stat") }
        guard keygate_pidfd_pid(pidfd) == pid else { throw PeerIdentityError("process \(pid) exited") }
        guard started <= acceptedTicks else {
            throw PeerIdentityError("pid \(pid) names a process started after the connection (a reused pid)")
        }
        var againPid: Int32 = 0
        var againUid: UInt32 = 0
        var againGid: UInt32 = 0
        guard keygate_peer_credentials(socket, &againPid, &againUid, &againGid) == 0,
            againPid == pid, againUid == uid, againGid == gid
        else {
            throw PeerIdentityError("peer credentials changed while they were checked")
        }
    }

    /// Field 22 of `/proc/<pid>/stat` (after the parenthesised command name, which may hold
    /// spaces and parentheses: parsed from the last ')').
    public static func startTicks(_ pid: Int32) -> UInt64? {
        guard let text = readSmallFile("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state); field 22 is fields[19].
        guard fields.count > 19 else { return nil }
        return UInt64(fields[19])
    }

    /// The namespaces a caller must share with the daemon for its program to count for a grant.
    static let grantNamespaces = ["mnt", "pid", "user"]

    /// Whether process `pid` is in each of the daemon's own ``grantNamespaces`` (its `ns/<kind>`
    /// is the same inode); false when any cannot be read.
    static func sharesNamespaces(_ pid: Int32) -> Bool {
        for (kind, ours) in zip(grantNamespaces, ownNamespaces) {
            var theirs = stat()
            guard let ours, stat("/proc/\(pid)/ns/\(kind)", &theirs) == 0,
                theirs.st_dev == ours.device && theirs.st_ino == ours.inode
            else { return false }
        }
        return true
    }

    /// The daemon's own ``grantNamespaces``, read once (they never change).
    private static let ownNamespaces: [(device: dev_t, inode: ino_t)?] = grantNamespaces.map { kind in
        var ours = stat()
        guard stat("/proc/self/ns/\(kind)", &ours) == 0 else { return nil }
        return (ours.st_dev, ours.st_ino)
    }

    private static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }
}

/// Why a caller's identity could not be established (the connection is refused).
public struct PeerIdentityError: Error, CustomStringConvertible {
    /// What could not be established.
    public let description: String
    init(_ description: String) { self.description = description }
}

extension PeerIdentity {
    /// `CLOCK_BOOTTIME` in clock ticks: taken right after `accept()`, what ``establish(socket:acceptedTicks:forceFallback:session:)`` checks a pidfd's process against.
    public static func acceptedNow() -> UInt64 { keygate_boottime_ticks() }

    /// Accepts a connection on `listening` (close-on-exec): its descriptor, or -1 with `errno`.
    public static func accept(_ listening: Int32) -> Int32 { keygate_accept(listening) }

    /// The pid `pidfd` names now: -1 once the process has exited, -2 when it cannot be read.
    public static func pid(of pidfd: Int32) -> Int32 { keygate_pidfd_pid(pidfd) }
}
