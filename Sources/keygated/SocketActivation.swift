import Glibc

/// systemd socket activation (`keygate.socket`), the protocol of sd_listen_fds(3) implemented
/// here so the daemon needs no libsystemd for it: systemd binds and listens, then starts the
/// daemon with the socket on fd 3 (`SD_LISTEN_FDS_START`), `LISTEN_FDS=1` and `LISTEN_PID` set
/// to the daemon's own pid.
///
/// Fail closed: variables that are present but not meant for this process (another pid, a
/// count other than one) or a descriptor that is not a listening `AF_UNIX` stream socket stop
/// the daemon with a message saying which, instead of falling back to binding `--socket`
/// behind systemd's back. The variables (and `LISTEN_FDNAMES`) are removed from the
/// environment whatever the outcome, and the descriptor is made close-on-exec, so nothing the
/// daemon starts (a PAM helper) inherits either.
enum SocketActivation {
    /// The first (and here only) descriptor systemd passes.
    static let firstDescriptor: Int32 = 3

    /// The socket systemd passed.
    struct Inherited: Equatable {
        /// The listening descriptor (3).
        let fd: Int32
        /// The path it is bound to (`@name` for an abstract address, empty when unnamed).
        let path: String
    }

    /// Takes the socket systemd passed, if the environment says there is one.
    /// - Returns: nil when neither `LISTEN_PID` nor `LISTEN_FDS` is set (not socket-activated).
    /// - Throws: ``StartupError`` naming the variable or the descriptor at fault.
    static func take() throws(StartupError) -> Inherited? {
        let pidText = environment("LISTEN_PID")
        let countText = environment("LISTEN_FDS")
        for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(name) }
        guard pidText != nil || countText != nil else { return nil }
        try check(pid: pidText, count: countText, ownPID: getpid())
        let fd = firstDescriptor
        let path = try checkSocket(fd)
        // Close-on-exec and blocking (accept waits), whatever systemd's NonBlocking= says.
        let flags = fcntl(fd, F_GETFL)
        guard fcntl(fd, F_SETFD, FD_CLOEXEC) == 0, flags >= 0, fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0 else {
            throw StartupError("fd 3 from systemd: cannot be made close-on-exec (errno \(errno))")
        }
        return Inherited(fd: fd, path: path)
    }

    /// Checks the two variables: both set, `LISTEN_PID` this process, `LISTEN_FDS` exactly 1.
    static func check(pid: String?, count: String?, ownPID: pid_t) throws(StartupError) {
        guard let pid, let count else {
            let missing = pid == nil ? "LISTEN_PID" : "LISTEN_FDS"
            throw StartupError("socket activation: \(missing) is missing; refusing to start")
        }
        guard let number = Int32(pid), number > 0 else {
            throw StartupError("socket activation: LISTEN_PID='\(pid)' is not a process id; refusing to start")
        }
        guard number == ownPID else {
            throw StartupError(
                "socket activation: LISTEN_PID=\(number) is another process (this is \(ownPID)): "
                    + "the socket was passed to someone else; refusing to start")
        }
        guard count == "1" else {
            throw StartupError(
                "socket activation: LISTEN_FDS='\(count)', keygated takes exactly one socket "
                    + "(one ListenStream= in keygate.socket); refusing to start")
        }
    }

    /// Checks that `fd` is a listening `AF_UNIX` stream socket.
    /// - Returns: the path it is bound to.
    private static func checkSocket(_ fd: Int32) throws(StartupError) -> String {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw StartupError("socket activation: fd 3 is not open (errno \(errno)); refusing to start")
        }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw StartupError("socket activation: fd 3 is not a socket; refusing to start")
        }
        guard option(fd, SO_DOMAIN) == AF_UNIX, option(fd, SO_TYPE) == Int32(SOCK_STREAM.rawValue),
            option(fd, SO_ACCEPTCONN) == 1
        else {
            throw StartupError(
                "socket activation: fd 3 is not a listening AF_UNIX stream socket "
                    + "(keygate.socket needs ListenStream=PATH); refusing to start")
        }
        return boundPath(fd)
    }

    private static func option(_ fd: Int32, _ name: Int32) -> Int32? {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, name, &value, &length) == 0 else { return nil }
        return value
    }

    private static func boundPath(_ fd: Int32) -> String {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let offset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        guard named == 0, Int(length) > offset else { return "" }
        var bytes = withUnsafeBytes(of: &address.sun_path) { Array($0.prefix(Int(length) - offset)) }
        if bytes.first == 0 { return "@" + String(decoding: bytes.dropFirst(), as: UTF8.self) }
        if let end = bytes.firstIndex(of: 0) { bytes.removeSubrange(end...) }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }
}
