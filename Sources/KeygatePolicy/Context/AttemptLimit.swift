/// Keygate's own failure counter: `maxFailures` failures of a factor within `windowSeconds`
/// lock that factor out for `lockoutSeconds`, whatever the PAM stack does (spec §4.3 uses 5).
public struct AttemptPolicy: Hashable, Sendable {
    /// Failures that lock the factor out (Apple: 5).
    public var maxFailures: Int
    /// The window in which failures are counted (pam_faillock's default `fail_interval` is 900 s).
    public var windowSeconds: Int
    /// How long a lockout lasts.
    public var lockoutSeconds: Int

    /// A policy; the defaults are 5 failures within 15 minutes lock out for 5 minutes.
    public init(maxFailures: Int = 5, windowSeconds: Int = 900, lockoutSeconds: Int = 300) {
        self.maxFailures = max(maxFailures, 1)
        self.windowSeconds = max(windowSeconds, 1)
        self.lockoutSeconds = max(lockoutSeconds, 0)
    }
}

/// The failures of one factor within the current window, and its lockout.
public struct AttemptRecord: Hashable, Sendable {
    /// Failures counted in the current window.
    public var failures: Int
    /// When the current window began (the first failure in it).
    public var windowStart: Timestamp?
    /// The factor is locked out until this time.
    public var lockedUntil: Timestamp?

    /// A record; the default has no failures.
    public init(failures: Int = 0, windowStart: Timestamp? = nil, lockedUntil: Timestamp? = nil) {
        self.failures = failures
        self.windowStart = windowStart
        self.lockedUntil = lockedUntil
    }

    /// True while locked out at `now`.
    public func isLockedOut(at now: Timestamp) -> Bool {
        guard let lockedUntil else { return false }
        return now < lockedUntil
    }

    /// Counts a failure at `now` under `policy`. A failure within the window of its start counts
    /// in it whichever came first: processes that failed at once record their failures in
    /// whatever order they take the ledger's lock, so one stamped a moment before the window's
    /// start still counts (and the window then starts at it), never resets the count.
    /// - Returns: true when this failure started a lockout.
    public mutating func recordFailure(at now: Timestamp, policy: AttemptPolicy) -> Bool {
        let window = Int64(policy.windowSeconds)
        if let start = windowStart, abs(start.wholeSeconds(until: now)) < window {
            failures += 1
            if now < start { windowStart = now }
        } else {
            windowStart = now
            failures = 1
        }
        guard failures >= policy.maxFailures, !isLockedOut(at: now) else { return false }
        lockedUntil = now.adding(seconds: Double(policy.lockoutSeconds))
        failures = 0
        windowStart = nil
        return true
    }
}

/// The attempt records of the factors Keygate counts.
public struct FactorAttempts: Hashable, Sendable {
    /// The passcode's record.
    public var passcode = AttemptRecord()
    /// Biometry's record.
    public var biometry = AttemptRecord()

    /// No failures.
    public init() {}

    /// The record of `factor`; the companion and application-password factors are not counted.
    public subscript(factor: Factor) -> AttemptRecord {
        get {
            switch factor {
            case .passcode: passcode
            case .biometry: biometry
            case .companion, .applicationPassword: AttemptRecord()
            }
        }
        set {
            switch factor {
            case .passcode: passcode = newValue
            case .biometry: biometry = newValue
            case .companion, .applicationPassword: break
            }
        }
    }
}

/// Keeps failure counts beyond one context, so that separate processes share one lockout
/// (the CLI keeps them in a locked file). Each method must be atomic with respect to every
/// other user of the same ledger.
///
/// A ledger fails closed: when its records cannot be read or trusted, ``lockout(of:at:)``
/// answers a lockout (never "no failures") and nothing is written over them; when a failure
/// cannot be kept, ``recordFailure(of:at:policy:)`` answers a lockout, so the attempt is never
/// forgotten.
public protocol AttemptLedger: Sendable {
    /// The end of `factor`'s lockout when it is locked out at `now`, else nil; a lockout too
    /// when the ledger cannot be read or trusted.
    func lockout(of factor: Factor, at now: Timestamp) -> Timestamp?
    /// Counts a failure of `factor` at `now` under `policy`. - Returns: the end of a lockout
    /// this failure started, or of one standing for a failure that could not be kept.
    func recordFailure(of factor: Factor, at now: Timestamp, policy: AttemptPolicy) -> Timestamp?
    /// Clears `factor`'s failures after a success (a passcode success also clears biometry's);
    /// a ledger that cannot be used stays as it is.
    func recordSuccess(of factor: Factor)
}
