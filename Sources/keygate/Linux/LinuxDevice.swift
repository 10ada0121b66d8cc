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
/// - **Biometry**: `fprintd-list` when fprintd is installed and has a reader, else the
///   enrollment file named by `KEYGATE_ENROLLMENT_FILE` (one template id a line); the set's
///   hash is the enrollment-set hash, an empty set means nothing enrolled, no source means no
///   sensor. fprintd lists finger names only, so re-enrolling the same finger is not seen.
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
        let (available, enrollment) = try Self.biometry()
        snapshotValue = DeviceSnapshot(
            device: DeviceState(
                isLocked: locked, hasBeenUnlockedSinceBoot: !locked || bootRecorded, isPasscodeSet: true),
            biometryAvailable: available, enrollment: enrollment)
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

    /// Whether a sensor is there, and the enrolled set's hash.
    static func biometry() throws(KeygateError) -> (Bool, EnrollmentSetHash?) {
        if let fprintd = fprintdEnrollment() { return fprintd }
        if let path = ProcessInfo.processInfo.environment["KEYGATE_ENROLLMENT_FILE"], !path.isEmpty {
            guard FileManager.default.fileExists(atPath: path) else { return (true, nil) }
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw KeygateError(.notAvailable, "cannot read the enrollment file \(path)")
            }
            let ids = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty && !$0.hasPrefix("#") }
            return (true, EnrollmentSetHash(templateIDs: ids))
        }
        return (false, nil)
    }

    /// The reader and enrolled fingers from fprintd, when fprintd is installed and answers.
    static func fprintdEnrollment() -> (Bool, EnrollmentSetHash?)? {
        guard let fprintd = which("fprintd-list"), let user = try? currentUserName(),
            let output = run(fprintd, [user])
        else { return nil }
        if output.contains("No devices available") { return nil }
        var device = ""
        var fingers: [String] = []
        for line in output.split(separator: "\n") {
            if line.hasPrefix("Fingerprints for user"), let on = line.range(of: " on ") {
                device = String(line[on.upperBound...])
            } else if let hash = line.range(of: "#"),
                let colon = line.range(of: ": ", range: hash.upperBound..<line.endIndex)
            {
                fingers.append(device + "/" + line[colon.upperBound...].trimmingCharacters(in: .whitespaces))
            }
        }
        return (true, EnrollmentSetHash(templateIDs: fingers))
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
