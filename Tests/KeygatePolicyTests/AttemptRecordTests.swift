import KeygatePolicy
import Testing

/// Failures counted toward a lockout, whatever order processes that failed at once record them in.
@Suite struct AttemptRecordTests {
    let policy = AttemptPolicy()

    @Test func failuresRecordedOutOfOrderStillLockOut() {
        var record = AttemptRecord()
        let base = Timestamp(nanoseconds: 1_000_000_000_000)
        // Five processes failed within a second; the one stamped last took the lock first.
        let stamps = [4, 0, 3, 1, 2].map { base.adding(seconds: Double($0) * 0.2) }
        var locked = false
        for stamp in stamps { locked = record.recordFailure(at: stamp, policy: policy) || locked }
        #expect(locked, "five failures within the window locked out")
        #expect(record.isLockedOut(at: base.adding(seconds: 1)))
    }

    @Test func aFailureOutsideTheWindowStartsAgain() {
        var record = AttemptRecord()
        let base = Timestamp(nanoseconds: 1_000_000_000_000)
        _ = record.recordFailure(at: base, policy: policy)
        let later = base.adding(seconds: Double(policy.windowSeconds) + 1)
        _ = record.recordFailure(at: later, policy: policy)
        #expect(record.failures == 1 && record.windowStart == later)
        // A failure stamped a whole window before the start does not count in it either.
        let earlier = later.adding(seconds: -Double(policy.windowSeconds) - 1)
        _ = record.recordFailure(at: earlier, policy: policy)
        #expect(record.failures == 1 && record.windowStart == earlier)
    }
}
