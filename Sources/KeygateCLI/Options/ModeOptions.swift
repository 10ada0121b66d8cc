import Glibc

/// Where a command's items are: the store in this process, or `keygated` on a socket.
enum Mode: Sendable, Equatable {
    /// The embedded store, gated in this process (the user's own files).
    case embedded
    /// The broker on `socket`: the daemon keeps the store and decides.
    case daemon(socket: String)
}

/// `--daemon` and `--embedded`, and `KEYGATE_SOCKET`: which mode a command runs in.
///
/// With neither flag the mode follows the socket: the daemon when `KEYGATE_SOCKET` (default
/// `/run/keygate/keygated.sock`) names a socket, embedded otherwise. That is safe because only
/// root can create the default socket (`/run/keygate` is root's), so no other user can switch a
/// command into or out of daemon mode; `KEYGATE_SOCKET` is the user's own environment, which
/// anyone able to set it could as well use to run another program; and a socket that is there
/// but dead fails (it is never a reason to fall back), while embedded mode only ever reaches the
/// user's own embedded store, never the daemon's items.
struct ModeOptions: Sendable {
    static let daemon = OptionSpec(
        "daemon", .flag, help: "use keygated on $KEYGATE_SOCKET (default /run/keygate/keygated.sock)")
    static let embedded = OptionSpec("embedded", .flag, help: "use the store in this process, never the daemon")
    static let options = [daemon, embedded]

    /// The daemon's socket when `KEYGATE_SOCKET` names none.
    static let defaultSocket = "/run/keygate/keygated.sock"

    /// What the command line asked for.
    enum Choice: Sendable, Equatable {
        /// `--daemon`.
        case daemon
        /// `--embedded`.
        case embedded
        /// Neither: the socket decides.
        case automatic
    }

    /// What the command line asked for.
    let choice: Choice
    /// The daemon's socket: `KEYGATE_SOCKET`, else ``defaultSocket``.
    let socket: String

    /// Reads the flags and `KEYGATE_SOCKET` (empty counts as unset).
    /// - Throws: a usage error when both flags are given.
    init(_ arguments: ParsedArguments, variables: EnvironmentVariables) throws(UsageError) {
        switch (arguments.flag(Self.daemon), arguments.flag(Self.embedded)) {
        case (true, true): throw UsageError("--daemon and --embedded cannot be used together")
        case (true, false): choice = .daemon
        case (false, true): choice = .embedded
        case (false, false): choice = .automatic
        }
        let socket = variables["KEYGATE_SOCKET"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.defaultSocket
        self.socket = ParsedArguments.absolute(socket)
    }

    /// The mode: the flag's, else the daemon when ``socket`` is a socket (one `stat`, nothing
    /// connects here).
    func resolve() -> Mode {
        switch choice {
        case .daemon: return .daemon(socket: socket)
        case .embedded: return .embedded
        case .automatic: return Self.isSocket(socket) ? .daemon(socket: socket) : .embedded
        }
    }

    /// Whether `path` is a socket (following symbolic links, as `connect` does).
    static func isSocket(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFSOCK
    }
}
