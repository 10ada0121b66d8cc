public import KeygatePolicy
import Synchronization

/// A clock that moves only when a test moves it, to cross reuse windows deterministically.
public final class ManualClock: KeygateClock {
    private let current: Mutex<Timestamp>

    /// A clock reading `start` (by default an arbitrary fixed instant).
    public init(start: Timestamp = Timestamp(seconds: 1_800_000_000)) {
        current = Mutex(start)
    }

    /// The current reading.
    public func now() -> Timestamp { current.withLock { $0 } }

    /// Moves the clock forward (or back, with a negative value) by `seconds`.
    public func advance(seconds: Double) {
        current.withLock { $0 = $0.adding(seconds: seconds) }
    }
}
