import KeygateLinux
import KeygatePolicy

/// The CLI is the application `keygate` of KeygateLinux: its runtime directory, its proof
/// records, its device.
enum LinuxWiring {
    /// `keygate`'s proof records (`$XDG_RUNTIME_DIR/keygate/`), or nil when none can be kept
    /// safely (a warning on `console` says why).
    static func proofRecords(_ console: Console) -> ProofRecords? {
        do {
            // Only the variables the two read (each default would copy the whole environment).
            let environment = ProcessEnvironment.values(StandardPaths.variables + ProofRecords.variables)
            let paths = try? StandardPaths(application: "keygate", environment: environment)
            return try ProofRecords.open(directory: paths?.runtimeDirectory, environment: environment)
        } catch {
            console.err("keygate: warning: ignoring \(error.message)")
            return nil
        }
    }

    /// The environment variables the device reads.
    static var deviceEnvironment: [String: String] { ProcessEnvironment.values(LinuxDevice.variables) }

    /// The device, warning on `console` about what cannot be read; `askedAhead` is its lock-state
    /// question, sent before the store was opened (the answer comes while it opens).
    static func device(
        mode: LinuxDevice.Mode, environment: [String: String], askedAhead: LinuxDevice.AskedLockState,
        records: ProofRecords?, ledger: any AttemptLedger, console: Console
    ) -> LinuxDevice {
        LinuxDevice(
            mode: mode, proofRecords: records, attemptLedger: ledger, environment: environment,
            onWarning: { console.err("keygate: warning: \($0)") }, askedAhead: askedAhead)
    }
}
