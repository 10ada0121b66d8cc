import Glibc
public import KeygatePolicy

/// The device state on Linux, read afresh for every keychain call.
///
/// - **Locked**: the logind session's `LockedHint`, asked of logind over D-Bus in process
///   (no subprocess), within 250 ms. No session, no system bus, or no logind that knows the
///   session (a server, a container, CI), means unlocked; a bus that does not answer in time
///   or answers with an error means locked (fail closed, with a warning). ``Mode`` overrides
///   it (the CLI's `--device-state` / `KEYGATE_DEVICE_STATE`).
/// - **Unlocked since boot**: unlocked now, or a proof of presence was recorded for this
///   boot (`/proc/sys/kernel/random/boot_id`) in the ``ProofRecords``.
/// - **Biometry**: The enrollment source: the file named by `KEYGATE_ENROLLMENT_FILE` (one
///   template id a line) when set, else fprintd, asked over D-Bus in process (250 ms deadline)
///   about the enrollment user's fingers (the process owner, or the uid a broker names),
///   and only when a call involves biometry; the set's hash is the enrollment-set hash. Only
///   a readable, non-empty set makes biometry available; a missing, unreadable or empty
///   source means no usable sensor, which never invalidates an item. fprintd lists finger names only, so re-enrolling the same finger
///   is not seen.
/// - **Passcode**: the account password; always considered set (PAM checks it).
public struct LinuxDevice: DeviceStateSource {
    /// Where the lock state comes from.
    public enum Mode: String, CaseIterable, Sendable {
        /// The logind session's `LockedHint`.
        case logind
        /// Always unlocked (servers, tests).
        case unlocked
        /// Always locked.
        case locked
    }

    /// Where the lock state comes from.
    public let mode: Mode
    /// Where a proof during this boot was recorded (unlocked since boot).
    public let proofRecords: ProofRecords?
    /// The failure ledger shared by every keychain over this device, when one was given.
    public let attemptLedger: (any AttemptLedger)?
    /// The session, bus and enrollment file the state is read from.
    public let sources: DeviceSources
    /// Whose fingers fprintd is asked about; nil: this process's effective user.
    private let enrollmentUser: UInt32?
    private let onWarning: @Sendable (String) -> Void
    private let logindTimeoutMicroseconds: UInt64
    /// The lock-state question sent before the device was made (`askedAhead`), for the first snapshot.
    private let lockQuestion: LogindSession.Question?

    /// The environment variables a device made from an environment reads (``DeviceSources/init(environment:)``).
    public static let variables = DeviceSources.variables

    /// The system bus's address when none is named.
    public static let defaultSystemBusAddress = LogindSession.defaultSystemBusAddress

    /// A device read afresh at every ``snapshot()`` (each keychain call reads it once), from the
    /// sources `environment` names (``DeviceSources/init(environment:)``): for a process that
    /// describes itself, as the CLI and an app do.
    /// - Parameters:
    ///   - mode: where the lock state comes from.
    ///   - proofRecords: where a proof during this boot was recorded (unlocked since boot).
    ///   - attemptLedger: the user's failure ledger, shared by every keychain over this device.
    ///   - environment: `XDG_SESSION_ID`, `DBUS_SYSTEM_BUS_ADDRESS` (the system bus when unset),
    ///     and `KEYGATE_ENROLLMENT_FILE` are read from it.
    ///   - enrollmentUser: the uid whose enrolled fingers fprintd is asked about; nil (the
    ///     default) is this process's effective user.
    ///   - logindTimeout: how long the whole question to logind may take before the state
    ///     counts as locked (default 250 ms).
    ///   - onWarning: told what could not be read (an unusable enrollment source, a lock state
    ///     logind did not give), never a secret.
    ///   - askedAhead: the lock-state question ``askLockState(mode:environment:logindTimeout:)``
    ///     sent earlier: the first ``snapshot()`` reads its answer (the state when it was asked),
    ///     when it asked about this device's session and bus less than `logindTimeout` ago;
    ///     every other snapshot asks afresh.
    public init(
        mode: Mode = .logind, proofRecords: ProofRecords? = nil, attemptLedger: (any AttemptLedger)? = nil,
        environment: [String: String] = ProcessEnvironment.current(), enrollmentUser: UInt32? = nil,
        logindTimeout: Duration = .milliseconds(250),
        onWarning: @escaping @Sendable (String) -> Void = { _ in },
        askedAhead: AskedLockState? = nil
    ) {
        self.init(
            mode: mode, sources: DeviceSources(environment: environment), proofRecords: proofRecords,
            attemptLedger: attemptLedger, enrollmentUser: enrollmentUser, logindTimeout: logindTimeout,
            onWarning: onWarning, askedAhead: askedAhead)
    }

    /// A device read afresh at every ``snapshot()`` from `sources` as given: for a broker, which
    /// names its caller's session as the kernel reported it and its own bus, and reads no
    /// environment of the caller's. `enrollmentUser` is then the caller's uid (fprintd is asked
    /// about its fingers, never the daemon's own). The other parameters are as for
    /// ``init(mode:proofRecords:attemptLedger:environment:enrollmentUser:logindTimeout:onWarning:askedAhead:)``.
    public init(
        mode: Mode, sources: DeviceSources, proofRecords: ProofRecords? = nil,
        attemptLedger: (any AttemptLedger)? = nil, enrollmentUser: UInt32? = nil,
        logindTimeout: Duration = .milliseconds(250), onWarning: @escaping @Sendable (String) -> Void = { _ in },
        askedAhead: AskedLockState? = nil
    ) {
        self.logindTimeoutMicroseconds = Self.microseconds(logindTimeout)
        self.mode = mode
        self.proofRecords = proofRecords
        self.attemptLedger = attemptLedger
        self.sources = sources
        self.enrollmentUser = enrollmentUser
        self.onWarning = onWarning
        self.lockQuestion = mode == .logind ? askedAhead?.question : nil
    }

    /// The lock-state question of a device in `mode` with `environment`, sent now: in
    /// ``Mode/logind``, in a login session, on a plain `unix:path=` bus, the bus and logind answer
    /// while the caller goes on (opens its store), and the device made with it reads the answer
    /// at its first snapshot. Otherwise nothing is sent and the device asks when it needs to.
    /// For a process that makes one keychain call (the CLI); a long-lived keychain asks at each
    /// call instead.
    public static func askLockState(
        mode: Mode, environment: [String: String], logindTimeout: Duration = .milliseconds(250)
    ) -> AskedLockState {
        guard mode == .logind else { return AskedLockState(question: nil) }
        return AskedLockState(
            question: LogindSession.Question.ask(
                sources: DeviceSources(environment: environment), timeout: microseconds(logindTimeout)))
    }

    /// A lock-state question sent ahead of need (``askLockState(mode:environment:logindTimeout:)``).
    public struct AskedLockState: Sendable {
        fileprivate let question: LogindSession.Question?
    }

    private static func microseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000_000)
    }

    /// The state now: lock state, unlocked since boot, and the enrolled set.
    public func snapshot() -> DeviceSnapshot { snapshot(readingBiometry: true) }

    /// The state now; the enrolled set (a file, or fprintd over D-Bus) is read only when
    /// `readingBiometry` is true, else biometry counts as unavailable.
    public func snapshot(readingBiometry: Bool) -> DeviceSnapshot {
        let enrollment = readingBiometry ? enrolledSet() : nil
        return DeviceSnapshot(device: deviceState(), biometryAvailable: enrollment != nil, enrollment: enrollment)
    }

    /// The lock state now (logind asked in ``Mode/logind``), and whether the device has been
    /// unlocked since boot; the passcode always counts as set.
    public func deviceState() -> DeviceState {
        let locked: Bool
        switch mode {
        case .unlocked: locked = false
        case .locked: locked = true
        case .logind: locked = logindLocked()
        }
        let bootRecorded = proofRecords?.bootRecorded ?? false
        return DeviceState(isLocked: locked, hasBeenUnlockedSinceBoot: !locked || bootRecorded, isPasscodeSet: true)
    }

    /// The enrolled set now (the enrollment file, or fprintd over D-Bus); nil when biometry
    /// cannot be used (and `onWarning` says why, when something went wrong).
    public func enrolledSet() -> EnrollmentSetHash? {
        switch EnrollmentSource.read(sources: sources, user: enrollmentUser ?? geteuid()) {
        case .enrolled(let hash):
            return hash
        case .unavailable(let why):
            if let why { onWarning("\(why); biometry is unavailable") }
            return nil
        }
    }

    /// True when this process's logind session says it is locked. No session, or no logind
    /// that knows it (a server, a container, CI), means unlocked; an answer that could not be
    /// read counts as locked, and says so through `onWarning`.
    private func logindLocked() -> Bool {
        switch LogindSession.lockState(
            sources: sources, askedAhead: lockQuestion, timeout: logindTimeoutMicroseconds)
        {
        case .noSession, .unlocked: return false
        case .locked: return true
        case .unreadable(let why):
            onWarning("\(why); the device counts as locked")
            return true
        }
    }
}
