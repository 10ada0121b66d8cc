/// What the device says right now: lock state, passcode, and biometric hardware and enrollment.
public struct DeviceSnapshot: Hashable, Sendable {
    /// Lock and passcode state.
    public var device: DeviceState
    /// A biometric sensor is present and usable.
    public var biometryAvailable: Bool
    /// The enrolled set's hash; nil when nothing is enrolled.
    public var enrollment: EnrollmentSetHash?

    /// A snapshot.
    public init(
        device: DeviceState = DeviceState(), biometryAvailable: Bool = false, enrollment: EnrollmentSetHash? = nil
    ) {
        self.device = device
        self.biometryAvailable = biometryAvailable
        self.enrollment = enrollment
    }
}

/// Tells the current device state (logind and fprintd on Linux; a simulated device in tests).
///
/// Duties: answer quickly and without prompting; when unsure, report the safer state
/// (locked, nothing enrolled).
public protocol DeviceStateSource: Sendable {
    /// The current state.
    func snapshot() -> DeviceSnapshot

    /// The device-wide failure ledger, when the device keeps one: a keychain over this device
    /// counts failures there (spec §4.3: lockouts are system-wide). nil by default.
    var attemptLedger: (any AttemptLedger)? { get }
}

extension DeviceStateSource {
    /// No device-wide ledger.
    public var attemptLedger: (any AttemptLedger)? { nil }
}

extension AuthenticationContext {
    /// Copies the device's current state into the context, keeping its proofs, lockouts and
    /// failure counts.
    public func refresh(from source: any DeviceStateSource) {
        let snapshot = source.snapshot()
        update { state in
            state.device = snapshot.device
            state.biometry.isAvailable = snapshot.biometryAvailable
            state.biometry.enrollment = snapshot.enrollment
        }
    }
}
