/// Who asked a broker for the decision a record holds, as the kernel reported it: the peer's
/// uid and pid (`SO_PEERCRED`), its executable (`/proc/<pid>/exe`, checked against a pidfd) and
/// its logind session. Never taken from anything the caller sent.
///
/// The record's own `pid`, `uid` and `exe` name the process that made the decision and wrote
/// the record: the caller itself in embedded mode (no `caller` then), `keygated` in daemon mode.
/// A record renders the caller once, as `"caller": {"uid": …, "pid": …, "exe": …, "session": …}`
/// just before `prev`; the further decisions a record names (`more`) share it.
public struct AuditCaller: Hashable, Sendable {
    /// The caller's user.
    public var userID: UInt32
    /// The caller's process.
    public var processID: Int32
    /// The caller's executable, when known (`exe`).
    public var executable: String?
    /// The caller's logind session, when it has one (`session`).
    public var session: String?

    /// A caller.
    public init(userID: UInt32, processID: Int32, executable: String? = nil, session: String? = nil) {
        self.userID = userID
        self.processID = processID
        self.executable = executable
        self.session = session
    }
}
