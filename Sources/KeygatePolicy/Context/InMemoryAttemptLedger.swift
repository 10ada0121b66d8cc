import Synchronization

/// An ``AttemptLedger`` kept in memory: failures counted here are shared by every context and
/// every call that uses the same ledger, so separate calls cannot escape a lockout (spec §4.3:
/// Apple's lockout is system-wide, not per `LAContext`).
///
/// A `Keychain` keeps one of these when it is not given another ledger (a device may provide
/// one, and the Linux CLI keeps its counters in a locked file).
public final class InMemoryAttemptLedger: AttemptLedger {
    private let attempts = Mutex(FactorAttempts())

    /// An empty ledger.
    public init() {}

    /// The end of `factor`'s lockout when it is locked out at `now`, else nil.
    public func lockout(of factor: Factor, at now: Timestamp) -> Timestamp? {
        attempts.withLock { attempts in
            attempts[factor].isLockedOut(at: now) ? attempts[factor].lockedUntil : nil
        }
    }

    /// Counts a failure of `factor` at `now` under `policy`.
    /// - Returns: the end of a lockout this failure started, else nil.
    public func recordFailure(of factor: Factor, at now: Timestamp, policy: AttemptPolicy) -> Timestamp? {
        attempts.withLock { attempts in
            var record = attempts[factor]
            let locked = record.recordFailure(at: now, policy: policy)
            attempts[factor] = record
            return locked ? record.lockedUntil : nil
        }
    }

    /// Clears `factor`'s failures; a passcode success also clears biometry's (and lifts its
    /// lockout), as on Apple devices.
    public func recordSuccess(of factor: Factor) {
        attempts.withLock { attempts in
            attempts[factor] = AttemptRecord()
            if factor == .passcode { attempts.biometry = AttemptRecord() }
        }
    }

    /// Locks `factor` out until `until` (or until a passcode success for biometry), as a
    /// device does after repeated failures elsewhere.
    public func lockOut(_ factor: Factor, until: Timestamp) {
        attempts.withLock { attempts in
            attempts[factor] = AttemptRecord(lockedUntil: until)
        }
    }
}
