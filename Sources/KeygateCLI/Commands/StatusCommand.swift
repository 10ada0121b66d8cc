import KeygatePAM
import KeygatePolicy

/// `keygate status`: which mode commands run in, where the items and the audit trail are, and,
/// through the daemon, its version and who it sees calling.
struct StatusCommand: Command {
    static let configuration = CommandConfiguration(
        name: "status", summary: "show the mode, the store, the audit trail and the daemon",
        discussion: """
            usage: keygate status

            Prints one `name: value` line each: the mode (embedded, or daemon with its socket) and
            why it was chosen, the PAM services a proof uses (embedded; or that the keygate service
            is not installed, and how to install it), the store and the audit trail (paths when embedded; the daemon
            keeps its own), and through the daemon its version and the caller it sees (uid, gid,
            pid, executable, as the kernel reports them). Exit 1 when the daemon cannot be reached.
            """,
        choosesMode: true)

    init(parsing arguments: ParsedArguments) {}

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        let global = context.global
        var lines: [(String, String)] = []
        switch global.mode {
        case .embedded:
            let paths = try global.store.paths()
            lines.append(("mode", "embedded (\(reason(global.modeOptions, global.mode)))"))
            lines.append(("pam", pamLine(global.pam)))
            lines.append(("store", paths.store))
            lines.append(("audit trail", paths.audit))
        case .daemon(let socket):
            let status = try await DaemonWiring.status(global)
            lines.append(("mode", "daemon (\(reason(global.modeOptions, global.mode)))"))
            lines.append(("socket", socket))
            lines.append(("store", "daemon-managed"))
            lines.append(("audit trail", "daemon-managed (keygate audit show, keygate audit verify)"))
            lines.append(("daemon", status.daemonVersion))
            lines.append(
                (
                    "caller",
                    "uid \(status.uid), gid \(status.gid), pid \(status.pid), "
                        + "executable \(status.executable.isEmpty ? "unknown" : status.executable)"
                ))
        }
        let width = lines.map(\.0.count).max() ?? 0
        for (name, value) in lines { context.console.out((name + ":").padding(to: width + 2) + value) }
        return .success
    }

    /// The PAM services a proof uses in embedded mode: the passcode service's file, or that it
    /// is not installed (and how to install it), and the biometry service's.
    private func pamLine(_ pam: PAMOptions) -> String {
        if let missing = pam.missingService(for: .passcode) { return missing.message }
        let configuration = pam.configuration(ledger: nil)
        let passcode = configuration.serviceFile(for: .passcode) ?? "?"
        let biometry =
            configuration.serviceFile(for: .biometry).map { "\(pam.biometryService) (\($0))" }
            ?? "\(pam.biometryService) not installed (biometry unavailable)"
        return "\(pam.passcodeService) (\(passcode)), \(biometry)"
    }

    /// Why the mode is what it is.
    private func reason(_ options: ModeOptions, _ mode: Mode) -> String {
        switch options.choice {
        case .daemon: "--daemon"
        case .embedded: "--embedded"
        case .automatic where mode == .embedded: "no daemon socket at \(options.socket)"
        case .automatic: "a socket is at \(options.socket)"
        }
    }
}
