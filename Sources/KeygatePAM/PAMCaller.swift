/// Who a PAM transaction is run for, as the application describes its caller to the modules:
/// `PAM_TTY` and `PAM_RUSER`. `PAM_RHOST` is never set (a local caller has no remote host).
///
/// An embedded program leaves both unset (the default). A broker such as `keygated` sets the
/// caller's controlling terminal and user name as the kernel reports them, so modules and
/// logs (`pam_succeed_if tty`, `pam_faillock`) see who asked.
public struct PAMCaller: Hashable, Sendable {
    /// `PAM_TTY`: the caller's controlling terminal (`/dev/pts/3`), nil when it has none.
    public var terminal: String?
    /// `PAM_RUSER`: the caller's user name, nil to leave it unset.
    public var remoteUser: String?

    /// A caller description; the default sets nothing.
    public init(terminal: String? = nil, remoteUser: String? = nil) {
        self.terminal = terminal
        self.remoteUser = remoteUser
    }
}
