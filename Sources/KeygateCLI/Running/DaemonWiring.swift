import Keygate
import KeygateClient
import KeygatePAM
import KeygatePolicy
import KeygateProtocol

/// What `keygated` reports about itself and the caller (`keygate status`).
struct DaemonStatus: Sendable, Equatable {
    /// The daemon's version string.
    let daemonVersion: String
    /// The caller's uid, as the kernel reported it to the daemon.
    let uid: UInt32
    /// The caller's gid.
    let gid: UInt32
    /// The caller's pid.
    let pid: Int32
    /// The caller's executable ("" when the daemon could not establish it).
    let executable: String
}

/// The CLI's side of daemon mode: every request goes to `keygated` on the mode's socket through
/// `KeygateClient`, which answers relayed prompts from the terminal or `--passphrase-fd`. Nothing
/// here reads the embedded store's paths, proof records, ledger or device variables.
enum DaemonWiring {
    /// A connection to the daemon for `accessGroups` (hello done).
    /// - Throws: `errSecNotAvailable` naming the socket when no daemon answers there.
    static func client(
        _ global: GlobalOptions, accessGroups: [String], source: (any PassphraseSource)? = nil
    ) throws(KeygateError) -> KeygateClient {
        guard case .daemon(let socket) = global.mode else {
            preconditionFailure("the daemon is only reached in daemon mode")
        }
        return try KeygateClient(
            socketPath: socket, accessGroups: accessGroups, clientName: "keygate", passphraseSource: source)
    }

    /// A session on the daemon for `accessGroup`: the command's requests ask for the
    /// `--reuse-seconds` window, and for no prompt at all with `--no-interaction` (exit 7, as
    /// embedded); with neither a terminal nor `--passphrase-fd` the daemon asks the session's
    /// authentication agent (`keygate agent`).
    /// When the terminal answers, its settings are put back when the session ends
    /// (``TerminalGuard``).
    static func open(_ global: GlobalOptions, accessGroup: String) throws(KeygateError) -> Session {
        let source = global.pam.passphraseSource()
        let client = try client(global, accessGroups: Session.groups(for: accessGroup), source: source)
        let terminal = source is TerminalPassphraseSource ? TerminalGuard.save() : nil
        var state = AuthenticationState(reuseSeconds: global.device.reuseSeconds)
        // Without a terminal or `--passphrase-fd` the daemon asks the session's authentication
        // agent (none: exit 7, as embedded); `--no-interaction` asks no one.
        state.interaction = global.pam.noInteraction ? .fail : .allow
        return Session(keychain: client, context: AuthenticationContext(state: state), accessGroup: accessGroup) {
            client.close()
            terminal?.restore()
        }
    }

    /// The daemon's status.
    static func status(_ global: GlobalOptions) async throws(KeygateError) -> DaemonStatus {
        let client = try client(global, accessGroups: [Session.defaultGroup])
        defer { client.close() }
        let status = try await client.status()
        return DaemonStatus(
            daemonVersion: status.daemonVersion, uid: status.uid, gid: status.gid, pid: status.pid,
            executable: status.executable)
    }

    /// Sends `lock`: the daemon forgets the caller's reusable proofs.
    static func lock(_ global: GlobalOptions) async throws(KeygateError) {
        let client = try client(global, accessGroups: [Session.defaultGroup])
        defer { client.close() }
        try await client.lock()
    }

    /// The caller's own audit records, one JSON text each, from the daemon.
    static func auditRecords(_ global: GlobalOptions) async throws(KeygateError) -> [String] {
        let client = try client(global, accessGroups: [Session.defaultGroup])
        defer { client.close() }
        return try await client.auditShow()
    }

    /// The daemon's verdict on the caller's own trail: records checked, or the problem.
    static func auditVerify(_ global: GlobalOptions) async throws(KeygateError) -> (records: UInt64, problem: String?) {
        let client = try client(global, accessGroups: [Session.defaultGroup])
        defer { client.close() }
        return try await client.auditVerify()
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
