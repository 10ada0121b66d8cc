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
    /// - Throws: a usage error naming the value for an unknown state or a bad number.
    init(_ arguments: ParsedArguments, variables: EnvironmentVariables, readsDeviceState: Bool = true)
        throws(UsageError)
    {
        let variable = readsDeviceState ? variables["KEYGATE_DEVICE_STATE"] : nil
        if let state = arguments.value(Self.state) ?? variable {
            guard let mode = LinuxDevice.Mode(rawValue: state) else {
                throw UsageError("unknown device state '\(state)' (expected logind, unlocked or locked)")
            }
            self.mode = mode
        }
        if let reuse = arguments.value(Self.reuseSeconds) ?? variables["KEYGATE_REUSE_SECONDS"] {
            guard let seconds = Int(reuse), seconds >= 0 else {
                throw UsageError("\(Self.reuseSeconds.spelling) needs a whole number of seconds, not '\(reuse)'")
            }
            reuseSeconds = min(seconds, AuthenticationState.maximumReuseSeconds)
        }
    }
}
