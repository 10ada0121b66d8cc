#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A point in time, in nanoseconds since the Unix epoch; stored inline.
public struct Timestamp: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// Nanoseconds since 1970-01-01T00:00:00Z.
    public let nanoseconds: Int64

    /// Wraps a nanosecond count.
    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// A timestamp a whole number of seconds after the epoch.
    /// Saturates at the representable range (about ±292 years around 1970).
    public init(seconds: Int64) {
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        self.init(nanoseconds: overflow ? (seconds < 0 ? .min : .max) : product)
    }

    /// This timestamp moved by `seconds` (negative moves back), saturating at the representable range.
    public func adding(seconds: Double) -> Timestamp {
        let moved = Double(nanoseconds) + seconds * 1e9
        guard moved.isFinite, moved < 9.2e18 else { return Timestamp(nanoseconds: moved < 0 ? .min : .max) }
        guard moved > -9.2e18 else { return Timestamp(nanoseconds: .min) }
        return Timestamp(nanoseconds: Int64(moved))
    }

    /// `later - self` in nanoseconds (negative when `later` is earlier).
    /// Saturates instead of overflowing.
    public func nanoseconds(until later: Timestamp) -> Int64 {
        let (difference, overflow) = later.nanoseconds.subtractingReportingOverflow(nanoseconds)
        return overflow ? (later.nanoseconds < nanoseconds ? .min : .max) : difference
    }

    /// Whole seconds from `self` to `later` (negative when `later` is earlier).
    @inline(__always)
    public func wholeSeconds(until later: Timestamp) -> Int64 { nanoseconds(until: later) / 1_000_000_000 }

    /// Orders by time.
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    /// Seconds since the epoch, with a fraction.
    public var description: String { "\(Double(nanoseconds) / 1e9)" }
}

/// Where the evaluator and authenticators read the time. Inject a manual clock in tests.
public protocol KeygateClock: Sendable {
    /// The current time.
    func now() -> Timestamp
}

/// The system's wall clock.
///
/// Proof ages are differences of wall-clock times, so a clock set backwards makes a proof
/// look as if it came from the future; the evaluator treats such proofs as stale (fail closed).
public struct SystemClock: KeygateClock {
    /// Creates the clock.
    public init() {}

    /// The current wall-clock time.
    public func now() -> Timestamp {
        Timestamp(nanoseconds: Int64(Date().timeIntervalSince1970 * 1e9))
    }
}
