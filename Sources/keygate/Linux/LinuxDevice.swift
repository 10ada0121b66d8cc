import Foundation
import KeygatePolicy

/// The device state `keygate` works from on Linux.
///
/// - **Locked**: the logind session's `LockedHint` (through `loginctl`, once per
///   invocation). No session, or no logind that knows it (a server, a container, CI), means
///   unlocked. `--device-state` or `KEYGATE_DEVICE_STATE` (`logind`, `unlocked`, `locked`)
///   overrides it.
/// - **Unlocked since boot**: unlocked now, or a proof of presence was recorded for this
///   boot (`/proc/sys/kernel/random/boot_id`) in the runtime directory.
/// - **Biometry**: ``EnrollmentSource``: the file named by `KEYGATE_ENROLLMENT_FILE` (one
///   template id a line) when set, else `fprintd-list` when fprintd is installed; the set's
///   hash is the enrollment-set hash. Only a readable, non-empty set makes biometry
///   available; a missing, unreadable or empty source means no usable sensor, which never
///   invalidates an item. fprintd lists finger names only, so re-enrolling the same finger
///   is not seen.
/// - **Passcode**: the account password; always considered set (PAM checks it).
struct LinuxDevice: DeviceStateSource {
    enum Mode: String, CaseIterable {
        case logind, unlocked, locked
    }

    let snapshotValue: DeviceSnapshot
    let bootRecorded: Bool

    func snapshot() -> DeviceSnapshot { snapshotValue }

    /// Reads the state once for this invocation.
    init(mode: Mode, runtime: RuntimeRecords?) throws(KeygateError) {
        let locked: Bool
        switch mode {
        case .unlocked: locked = false
        case .locked: locked = true
        case .logind: locked = Self.logindLocked()
        }
        bootRecorded = runtime?.bootRecorded ?? false
        let enrollment: EnrollmentSetHash?
        switch EnrollmentSource.read() {
        case .enrolled(let hash):
            enrollment = hash
        case .unavailable(let why):
            enrollment = nil
            if let why { Console.err("keygate: warning: \(why); biometry is unavailable") }
        }
        snapshotValue = DeviceSnapshot(
            device: DeviceState(
                isLocked: locked, hasBeenUnlockedSinceBoot: !locked || bootRecorded, isPasscodeSet: true),
            biometryAvailable: enrollment != nil, enrollment: enrollment)
    }

    /// True when this process's logind session says it is locked. No session, or no logind
    /// that knows it (a server, a container, CI), means unlocked, as the issue defines it;
    /// a session logind knows but whose hint is anything but "no" counts as locked.
    static func logindLocked() -> Bool {
        guard let session = ProcessInfo.processInfo.environment["XDG_SESSION_ID"], !session.isEmpty,
            let loginctl = which("loginctl"),
            let output = run(loginctl, ["show-session", session, "--property=LockedHint", "--value"])
        else { return false }
        return output.trimmingCharacters(in: .whitespacesAndNewlines) != "no"
    }

    static func currentUserName() throws -> String {
        guard let entry = getpwuid(geteuid()) else { throw KeygateError(.notAvailable, "no passwd entry") }
        return String(cString: entry.pointee.pw_name)
    }

    static func which(_ tool: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs a helper with a 5 s limit; nil when it fails or times out.
    static func run(_ tool: String, _ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            process.terminate()
            return nil
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
