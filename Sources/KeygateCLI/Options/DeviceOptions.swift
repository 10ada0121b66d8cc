import KeygateLinux
import KeygatePolicy

/// `--device-state` and `--reuse-seconds`: how the device is read and how long a proof is reused.
struct DeviceOptions: Sendable {
    static let state = OptionSpec(
        "device-state", .choice("STATE", ["logind", "unlocked", "locked"]),
        help: "logind (default), unlocked or locked")
    static let reuseSeconds = OptionSpec(
        "reuse-seconds", .text("SECONDS"), help: "reuse a proof for this long across invocations (0–300)")
    static let options = [state, reuseSeconds]

    /// How the lock state is read.
    var mode = LinuxDevice.Mode.logind
    /// How long a proof is reused across invocations (at most the engine's bound).
    var reuseSeconds = 0

    /// Reads the group's options, else `KEYGATE_DEVICE_STATE` (only when `readsDeviceState`:
    /// in daemon mode the daemon has its own view of the device, and the variable is not even
    /// read) and `KEYGATE_REUSE_SECONDS`.
    /// - Throws: a usage error naming the option or variable and the value for an unknown
    ///   state, or a reuse time that is not a whole number of seconds from 0 to 300.
    init(_ arguments: ParsedArguments, variables: EnvironmentVariables, readsDeviceState: Bool = true)
        throws(UsageError)
    {
        let variable = readsDeviceState ? variables["KEYGATE_DEVICE_STATE"] : nil
        if let given = Self.value(of: Self.state, arguments, else: "KEYGATE_DEVICE_STATE", variable) {
            guard let mode = LinuxDevice.Mode(rawValue: given.value) else {
                throw UsageError(
                    "\(given.source): unknown device state '\(given.value)' (expected logind, unlocked or locked)")
            }
            self.mode = mode
        }
        let maximum = AuthenticationState.maximumReuseSeconds
        let reuse = variables["KEYGATE_REUSE_SECONDS"]
        if let given = Self.value(of: Self.reuseSeconds, arguments, else: "KEYGATE_REUSE_SECONDS", reuse) {
            guard let seconds = Int(given.value), (0...maximum).contains(seconds) else {
                throw UsageError(
                    "\(given.source) needs a whole number of seconds from 0 to \(maximum), not '\(given.value)'")
            }
            reuseSeconds = seconds
        }
    }

    /// `spec`'s value and spelling when the option was given, else the variable's value and
    /// `name`: an error about the value names where it came from.
    private static func value(
        of spec: OptionSpec, _ arguments: ParsedArguments, else name: String, _ variable: String?
    ) -> (value: String, source: String)? {
        if let option = arguments.value(spec) { return (option, spec.spelling) }
        return variable.map { ($0, name) }
    }
}
