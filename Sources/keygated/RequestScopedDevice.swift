import KeygateLinux
import KeygatePolicy
import Synchronization

/// The device as one request sees it: the lock state read once per request (at its first
/// question) and the enrolled set at most once (at the first question that reads biometry),
/// both given to every later question of the same request. The daemon's reuse check and the
/// facade's gate therefore decide on the same state, and logind is asked once per request.
/// ``begin()`` starts the next request afresh.
final class RequestScopedDevice: DeviceStateSource {
    private let device: any DeviceReading
    private struct Read {
        var state: DeviceState?
        /// The enrolled set once read (nil inside: read, nothing usable).
        var enrollment: EnrollmentSetHash??
    }
    private let read = Mutex(Read())

    /// The request-scoped view of `device`.
    init(_ device: any DeviceReading) { self.device = device }

    var attemptLedger: (any AttemptLedger)? { device.attemptLedger }

    /// Forgets what the previous request read.
    func begin() { read.withLock { $0 = Read() } }

    func snapshot() -> DeviceSnapshot { snapshot(readingBiometry: true) }

    func snapshot(readingBiometry: Bool) -> DeviceSnapshot {
        read.withLock { read in
            let state = read.state ?? device.deviceState()
            read.state = state
            var enrollment: EnrollmentSetHash?
            if readingBiometry {
                let known = read.enrollment ?? device.enrolledSet()
                read.enrollment = .some(known)
                enrollment = known
            }
            return DeviceSnapshot(device: state, biometryAvailable: enrollment != nil, enrollment: enrollment)
        }
    }
}

/// What a ``RequestScopedDevice`` reads, each part on its own: the lock state (logind) and the
/// enrolled set (the enrollment file or fprintd). ``LinuxDevice`` is one.
protocol DeviceReading: Sendable {
    /// The lock state now.
    func deviceState() -> DeviceState
    /// The enrolled set now; nil when biometry cannot be used.
    func enrolledSet() -> EnrollmentSetHash?
    /// The device-wide failure ledger, if any.
    var attemptLedger: (any AttemptLedger)? { get }
}

extension LinuxDevice: DeviceReading {}
