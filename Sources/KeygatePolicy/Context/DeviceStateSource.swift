import Synchronization

/// What the device says right now: lock state, passcode, and biometric hardware and enrollment.
public struct DeviceSnapshot: Hashable, Sendable {
    /// Lock and passcode state.
    public var device: DeviceState
    /// A biometric sensor is present and usable, and its enrolled set was read.
    public var biometryAvailable: Bool
    /// The enrolled set's hash; nil when nothing is enrolled. With an available sensor, a
    /// hash different from an item's bound set is the evidence that invalidates the item;
    /// the facade records both in the audit trail when it removes one.
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
/// Duties: answer quickly and without prompting; when unsure, report the safer state:
/// locked, and biometry *unavailable* (`biometryAvailable: false`), never "available, nothing
/// enrolled". An available sensor whose set differs from an item's bound set invalidates that
/// `biometryCurrentSet` item for good, so report one only on positive evidence: an enrolled
/// set actually read.
public protocol DeviceStateSource: Sendable {
    /// The current state.
    func snapshot() -> DeviceSnapshot

    /// The current state, reading the biometric part only when `readingBiometry` is true;
    /// without it, biometry is reported unavailable and nothing is enrolled. A source whose
    /// biometry costs something to read (fprintd over D-Bus) implements it, so a keychain asks
    /// only for the items and rules that involve biometry. By default the whole ``snapshot()``.
    func snapshot(readingBiometry: Bool) -> DeviceSnapshot

    /// The device-wide failure ledger, when the device keeps one: a keychain over this device
    /// counts failures there (spec §4.3: lockouts are system-wide). nil by default.
    var attemptLedger: (any AttemptLedger)? { get }
}

extension DeviceStateSource {
    /// No device-wide ledger.
    public var attemptLedger: (any AttemptLedger)? { nil }

    /// The whole ``snapshot()``, biometry included whatever `readingBiometry` says.
    public func snapshot(readingBiometry: Bool) -> DeviceSnapshot { snapshot() }
}

extension AuthenticationContext {
    /// Copies the device's current state into the context, keeping its proofs, lockouts and
    /// failure counts.
    public func refresh(from source: any DeviceStateSource) {
        deferredBiometry.withLock { $0 = nil }
        copy(source.snapshot())
    }

    /// Copies the device's lock and passcode state into the context now, and its biometry
    /// (sensor and enrolled set) at the first ``readDeferredBiometry()``: until then biometry
    /// counts as unavailable, the safe side (nothing is invalidated, nothing proved by it).
    public func refreshDeferringBiometry(from source: any DeviceStateSource) {
        deferredBiometry.withLock { $0 = source }
        copy(source.snapshot(readingBiometry: false))
    }

    /// Reads the biometry that ``refreshDeferringBiometry(from:)`` left for later, once; does
    /// nothing when it was read already or nothing was deferred.
    public func readDeferredBiometry() {
        let pending = deferredBiometry.withLock { pending in
            defer { pending = nil }
            return pending
        }
        guard let source = pending else { return }
        copy(source.snapshot(readingBiometry: true), device: false)
    }

    private func copy(_ snapshot: DeviceSnapshot, device: Bool = true) {
        update { state in
            if device { state.device = snapshot.device }
            state.biometry.isAvailable = snapshot.biometryAvailable
            state.biometry.enrollment = snapshot.enrollment
        }
    }
}
