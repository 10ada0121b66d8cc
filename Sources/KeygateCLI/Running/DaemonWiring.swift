import KeygatePolicy

/// What `keygated` reports about itself and the caller (`keygate status`).
struct DaemonStatus: Sendable, Equatable {
    /// The daemon's version string.
    let daemonVersion: String
    /// The caller as the kernel reported it to the daemon.
    let uid: UInt32
    let gid: UInt32
    let pid: Int32
    /// The caller's executable ("" when the daemon could not establish it).
    let executable: String
}

/// The CLI's side of daemon mode: every request goes to `keygated` on the mode's socket.
enum DaemonWiring {
    /// The refusal while this build has no client for the daemon.
    private static func notServed(_ global: GlobalOptions) -> KeygateError {
        KeygateError(
            .unimplemented, "daemon mode (\(global.modeOptions.socket)) is not served by this build yet; use --embedded"
        )
    }

    /// Opens a session on the daemon for `accessGroup`.
    static func open(_ global: GlobalOptions, accessGroup: String, console: Console) async throws(KeygateError)
        -> Session
    {
        throw notServed(global)
    }

    /// The daemon's status.
    static func status(_ global: GlobalOptions, console: Console) async throws(KeygateError) -> DaemonStatus {
        throw notServed(global)
    }

    /// Sends `lock`: the daemon forgets the caller's reusable proofs.
    static func lock(_ global: GlobalOptions, console: Console) async throws(KeygateError) {
        throw notServed(global)
    }

    /// The caller's audit records, one JSON text each, from the daemon.
    static func auditRecords(_ global: GlobalOptions, console: Console) async throws(KeygateError) -> [String] {
        throw notServed(global)
    }

    /// The daemon's verdict on the caller's trail: records checked, or the problem.
    static func auditVerify(_ global: GlobalOptions, console: Console) async throws(KeygateError)
        -> (records: UInt64, problem: String?)
    {
        throw notServed(global)
    }
}

extension CommandContext {
    /// Refuses `command` in daemon mode: it works on the embedded store's files only.
    func requireEmbedded(_ command: String) throws(KeygateError) {
        guard case .daemon(let socket) = global.mode else { return }
        throw KeygateError(
            .unimplemented,
            "'keygate \(command)' works on the embedded store only; keygated at \(socket) does not serve it "
                + "(use --embedded)")
    }
}
