public import KeygatePolicy
import Synchronization

/// A device whose state a test drives: lock and unlock it, reboot it, remove or set the
/// passcode, enroll or remove fingers (which changes the enrollment-set hash), or take the
/// sensor away. Give it to a `Keychain` as its `device`, or refresh a context from it.
///
/// Like a real device it keeps one failure ledger for the whole device (``attemptLedger``):
/// every keychain over it counts failures there, so a lockout holds across calls and contexts.
public final class SimulatedDevice: DeviceStateSource {
    private struct State {
        var device = DeviceState()
        var biometryAvailable = false
        var templates: Set<String> = []
    }

    private let state: Mutex<State>
    private let ledger = InMemoryAttemptLedger()

    /// The device-wide failure ledger.
    public var attemptLedger: (any AttemptLedger)? { ledger }

    /// An unlocked device with a passcode and `enrolled` templates. Like a Linux machine without
    /// fprintd, the default has no biometry: no sensor and nothing enrolled. A device with
    /// templates has a sensor unless `biometryAvailable` says otherwise.
    public init(enrolled: Set<String> = [], biometryAvailable: Bool? = nil) {
        state = Mutex(State(biometryAvailable: biometryAvailable ?? !enrolled.isEmpty, templates: enrolled))
    }

    /// The current state.
    public func snapshot() -> DeviceSnapshot {
        state.withLock { state in
            DeviceSnapshot(
                device: state.device, biometryAvailable: state.biometryAvailable,
                enrollment: EnrollmentSetHash(templateIDs: state.templates))
        }
    }

    /// The current enrollment-set hash (nil when nothing is enrolled).
    public var enrollment: EnrollmentSetHash? { snapshot().enrollment }

    /// Locks the screen.
    public func lock() { state.withLock { $0.device.isLocked = true } }

    /// Unlocks the screen (also counts as the first unlock since boot).
    public func unlock() {
        state.withLock {
            $0.device.isLocked = false
            $0.device.hasBeenUnlockedSinceBoot = true
        }
    }

    /// Restarts: locked, and not unlocked since boot.
    public func reboot() {
        state.withLock {
            $0.device.isLocked = true
            $0.device.hasBeenUnlockedSinceBoot = false
        }
    }

    /// Removes the passcode (`whenPasscodeSet` items stop existing).
    public func removePasscode() { state.withLock { $0.device.isPasscodeSet = false } }

    /// Sets a passcode again.
    public func setPasscode() { state.withLock { $0.device.isPasscodeSet = true } }

    /// Enrolls another finger or face: the enrollment-set hash changes.
    public func enroll(_ template: String) { state.withLock { _ = $0.templates.insert(template) } }

    /// Removes an enrolled finger or face: the enrollment-set hash changes.
    public func removeEnrollment(_ template: String) { state.withLock { _ = $0.templates.remove(template) } }

    /// Locks biometry out for the whole device, as five failed matches do on a real one: every
    /// keychain over this device sees it, in every context, until a passcode proof lifts it
    /// (``KeygatePolicy/AuthenticationContext/recordProof(of:)``).
    public func lockOutBiometry() {
        ledger.lockOut(.biometry, until: Timestamp(nanoseconds: .max))
    }

    /// Takes the biometric sensor away, or gives it back.
    public func setBiometryAvailable(_ available: Bool) { state.withLock { $0.biometryAvailable = available } }
}
