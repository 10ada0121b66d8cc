import Glibc
import KeygateAudit
import KeygateClient
import KeygateLinux
import KeygatePAM
import KeygatePolicy
import KeygateSSHAgent
import KeygateServing
import KeygateStore

/// `keygate ssh-agent -a PATH`: an SSH agent serving the keeper's keys, each signature gated by
/// its key's access control.
struct SSHAgentCommand: Command {
    static let socketOption = OptionSpec(
        "socket", short: "a", .text("PATH"), required: true, help: "where to listen (SSH_AUTH_SOCK)")
    static let configuration = CommandConfiguration(
        name: "ssh-agent", summary: "serve the keeper's keys to ssh, git and ssh-keygen",
        discussion: """
            usage: keygate ssh-agent -a PATH [--passphrase-fd N] [--access-group G]

            Serves the SSH agent protocol on PATH (mode 0600; it appears once the agent listens)
            until killed, with the keys of `keygate key` as identities (the label as comment).
            Each signature is decided by its key's access control, the organisation's rules (the
            requesting program is the kernel's) and audited with the key, the SHA-256 of what was
            signed, the requesting program and, after session-bind@openssh.com, the server's host
            key. A proof is asked on this agent's terminal, from --passphrase-fd N (one line a
            question) or through KEYGATE_ASKPASS, each question naming the requesting program
            and pid; with none of them a key that needs a proof refuses at once. Adding or
            removing keys through the agent is refused: keys are made with `keygate key create`.
            Keys of the keygate group are served, and of G when given (as far as the
            organisation grants G to the requesting program). Only this user's processes are
            served. Prints SSH_AUTH_SOCK=PATH on standard output. Through keygated (--daemon),
            each connection is handed to the daemon, which serves it with its keys for the
            program the kernel names as the peer, and asks proofs of the session's keygate agent.
            With --reuse-seconds S (at most 300), a proof stands for S seconds: for the same
            requesting program here, for the same login session and terminal through keygated;
            never for a forwarded agent.
            """,
        options: [socketOption, PAMOptions.passphraseDescriptor, ItemOptions.accessGroup], loadsPolicies: true,
        choosesMode: true)

    let socket: String
    let passphraseDescriptor: Int32?
    let accessGroup: String?

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        socket = arguments.path(Self.socketOption) ?? arguments.required(Self.socketOption)
        passphraseDescriptor = try arguments.descriptor(PAMOptions.passphraseDescriptor)
        accessGroup = arguments.value(ItemOptions.accessGroup)
    }

    /// The groups whose keys are served: the CLI's own first, so a group the organisation grants
    /// only to some programs (`grant access-group "G" to program "/usr/bin/ssh"`) is left out for
    /// the others, its keys invisible to them, rather than failing every request of theirs.
    var servedGroups: [String] {
        [Session.defaultGroup] + (accessGroup.map { $0 == Session.defaultGroup ? [] : [$0] } ?? [])
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        if case .daemon(let daemonSocket) = context.global.mode {
            return try await handOver(to: daemonSocket, context)
        }
        let global = context.global
        let console = context.console
        let paths = try global.store.paths()
        let store = try SQLiteItemStore(path: paths.store)
        let ledger = paths.ledger(reportingTo: console)
        let device = LinuxDevice(
            mode: global.device.mode, proofRecords: nil, attemptLedger: ledger,
            environment: LinuxWiring.deviceEnvironment, onWarning: { console.err("keygate: warning: \($0)") })
        let source: (any PassphraseSource)? =
            passphraseDescriptor.map { FileDescriptorPassphraseSource(descriptor: $0) } ?? global.pam.passphraseSource()
        let backend = EmbeddedSSHAgentBackend(
            store: store, accessGroups: servedGroups, device: device, ledger: ledger,
            policies: global.policySet, sink: JSONLinesAuditSink(path: paths.audit, anchors: store), source: source,
            pam: global.pam, reuseSeconds: global.device.reuseSeconds, console: console)
        let listener = try SSHAgentListener(path: socket)
        StopOnSignal.removing(socket)
        let user = geteuid()
        try listener.start(
            backend: backend, admits: { $0.uid == user },
            log: { console.err("keygate ssh-agent: \($0)") })
        console.out("SSH_AUTH_SOCK=\(socket); export SSH_AUTH_SOCK;")
        console.err(
            "keygate ssh-agent: listening on \(socket)"
                + (source == nil ? " (no one to ask: keys that need a proof are refused)" : ""))
        return await waitUntilStopped(listener)
    }

    /// Daemon mode: each accepted connection is handed to keygated (``KeygateClient/SSHAgentHandOff``),
    /// which serves it with the daemon's keys and asks proofs of the session's `keygate agent`.
    private func handOver(to daemonSocket: String, _ context: CommandContext) async throws(KeygateError)
        -> ExitStatus
    {
        if passphraseDescriptor != nil {
            throw KeygateError(
                .param, "through keygated, proofs are asked by the session's keygate agent: --passphrase-fd is for it")
        }
        let console = context.console
        let reuseSeconds = UInt32(context.global.device.reuseSeconds)
        let listener = try SSHAgentListener(path: socket)
        StopOnSignal.removing(socket)
        let log: @Sendable (String) -> Void = { console.err("keygate ssh-agent: \($0)") }
        try listener.start(log: log) { client, _ in
            defer { close(client) }
            do throws(KeygateError) {
                try SSHAgentHandOff.pass(
                    client, to: daemonSocket, accessGroups: servedGroups, reuseSeconds: reuseSeconds)
            } catch {
                log("keygated refused a connection: \(error.message)")
            }
        }
        console.out("SSH_AUTH_SOCK=\(socket); export SSH_AUTH_SOCK;")
        console.err("keygate ssh-agent: listening on \(socket), served by keygated at \(daemonSocket)")
        return await waitUntilStopped(listener)
    }

    /// Sleeps until the process is stopped (``StopOnSignal``) or the task cancelled.
    private func waitUntilStopped(_ listener: SSHAgentListener) async -> ExitStatus {
        while true {
            do {
                try await Task.sleep(for: .seconds(3600))
            } catch {
                listener.remove()
                return .success
            }
        }
    }
}

/// Removes the agent's socket when the process is asked to stop (SIGINT, SIGTERM, SIGHUP),
/// then exits: a handler that calls only `unlink` and `_exit`, which are safe in one.
enum StopOnSignal {
    nonisolated(unsafe) private static var path: UnsafeMutablePointer<CChar>?

    static func removing(_ socket: String) {
        path = strdup(socket)
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            Glibc.signal(signal) { _ in
                if let path = StopOnSignal.path { unlink(path) }
                _exit(0)
            }
        }
    }
}
