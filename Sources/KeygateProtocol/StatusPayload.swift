/// The daemon's view of a connection (the `statusReply` message).
public struct StatusPayload: Sendable, Hashable {
    /// "daemon".
    public var mode: String
    /// The caller's uid, from the kernel.
    public var uid: UInt32
    /// The caller's gid, from the kernel.
    public var gid: UInt32
    /// The caller's pid, from the kernel (pinned by a pidfd).
    public var pid: Int32
    /// The caller's executable, from `/proc/<pid>/exe` checked against the pidfd ("" when unknown).
    public var executable: String
    /// The daemon's version.
    public var daemonVersion: String
    /// How the pidfd was obtained: "SO_PEERPIDFD" or "pidfd_open".
    public var pidfdSource: String

    /// A status.
    public init(
        mode: String, uid: UInt32, gid: UInt32, pid: Int32, executable: String, daemonVersion: String,
        pidfdSource: String
    ) {
        self.mode = mode
        self.uid = uid
        self.gid = gid
        self.pid = pid
        self.executable = executable
        self.daemonVersion = daemonVersion
        self.pidfdSource = pidfdSource
    }
}
