import KeygatePolicy
import Synchronization
import Testing

@testable import keygated

/// One view of the device per daemon request: the reuse check and the facade's gate read the
/// same state, and logind (and fprintd) are asked once per request, not once per question.
@Suite struct RequestScopedDeviceTests {
    final class CountingDevice: DeviceReading {
        let locks = Mutex(0)
        let enrollments = Mutex(0)
        let locked = Mutex(false)
        func deviceState() -> DeviceState {
            locks.withLock { $0 += 1 }
            let isLocked = locked.withLock { $0 }
            return DeviceState(isLocked: isLocked, hasBeenUnlockedSinceBoot: true, isPasscodeSet: true)
        }
        func enrolledSet() -> EnrollmentSetHash? {
            enrollments.withLock { $0 += 1 }
            return EnrollmentSetHash(templateIDs: ["finger"])
        }
        var attemptLedger: (any AttemptLedger)? { nil }
    }

    @Test func eachRequestReadsTheLockStateAndTheEnrolledSetOnce() {
        let counting = CountingDevice()
        let device = RequestScopedDevice(counting)
        device.begin()
        // The daemon's reuse check, then the facade's refresh, then its deferred biometry.
        let first = device.snapshot(readingBiometry: false)
        let second = device.snapshot(readingBiometry: false)
        let third = device.snapshot(readingBiometry: true)
        _ = device.snapshot()
        #expect(counting.locks.withLock { $0 } == 1)
        #expect(counting.enrollments.withLock { $0 } == 1)
        #expect(first == second && !first.biometryAvailable && third.biometryAvailable)
        // A lock between requests is seen by the next one, not by the one in flight.
        counting.locked.withLock { $0 = true }
        #expect(!device.snapshot(readingBiometry: false).device.isLocked)
        device.begin()
        #expect(device.snapshot(readingBiometry: false).device.isLocked)
        #expect(counting.locks.withLock { $0 } == 2)
    }
}
