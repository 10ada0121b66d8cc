/// Everything the evaluator knows about the device and the user's proofs at one moment.
///
/// A value: copying it never allocates. ``AuthenticationContext`` holds the live one.
public struct AuthenticationState: Hashable, Sendable {
    /// Lock and passcode state.
    public var device: DeviceState
    /// Biometric hardware and enrollment.
    public var biometry: BiometryState
    /// Whether a paired companion device is reachable (never, on a plain Linux host).
    public var isCompanionAvailable: Bool
    /// The latest proof of each factor made in this context.
    public var proofs: Proofs
    /// How many seconds a proof may be reused for, 0 to 300 (Apple's maximum).
    public private(set) var reuseSeconds: Int
    /// Whether prompting is allowed.
    public var interaction: InteractionPolicy
    /// True once ``AuthenticationContext/invalidate()`` was called: no proof counts any more.
    public var isInvalidated: Bool
    /// Keygate's failure counters and lockouts per factor.
    public var attempts: FactorAttempts

    /// The longest reuse window Apple supports (`LATouchIDAuthenticationMaximumAllowableReuseDuration`).
    public static let maximumReuseSeconds = 300

    /// A state; every parameter has the default of the `keygate evaluate` context file:
    /// unlocked, unlocked since boot, passcode set, no biometry, no proofs, no reuse, interaction allowed.
    public init(
        device: DeviceState = DeviceState(), biometry: BiometryState = BiometryState(),
        isCompanionAvailable: Bool = false, proofs: Proofs = Proofs(), reuseSeconds: Int = 0,
        interaction: InteractionPolicy = .allow, isInvalidated: Bool = false,
        attempts: FactorAttempts = FactorAttempts()
    ) {
        self.device = device
        self.biometry = biometry
        self.isCompanionAvailable = isCompanionAvailable
        self.proofs = proofs
        self.reuseSeconds = 0
        self.interaction = interaction
        self.isInvalidated = isInvalidated
        self.attempts = attempts
        setReuseSeconds(reuseSeconds)
    }

    /// Sets the reuse window, clamped to 0…300 seconds as Apple clamps it.
    public mutating func setReuseSeconds(_ seconds: Int) {
        reuseSeconds = min(max(seconds, 0), Self.maximumReuseSeconds)
    }
}

extension AuthenticationState {
    /// The freshness rule: a proof made at `time` counts at `now` when it is not dated in the
    /// future and its age in whole seconds is at most the reuse window (and the context is
    /// still valid).
    @inline(__always)
    public func isFresh(_ time: Timestamp, at now: Timestamp) -> Bool {
        !isInvalidated && time <= now && time.wholeSeconds(until: now) <= Int64(reuseSeconds)
    }

    /// The factors whose latest proof is fresh at `now`.
    public func freshFactors(at now: Timestamp) -> FactorSet {
        var fresh = FactorSet()
        for proof in proofs.all where isFresh(proof.time, at: now) { fresh.insert(FactorSet(proof.factor)) }
        return fresh
    }
}

/// Lock and passcode state of the device.
public struct DeviceState: Hashable, Sendable {
    /// The screen is locked: `whenUnlocked` classes are unavailable.
    public var isLocked: Bool
    /// The device has been unlocked once since boot: `afterFirstUnlock` classes are available.
    public var hasBeenUnlockedSinceBoot: Bool
    /// A passcode (account password) is set: the passcode factor and `whenPasscodeSet` items work.
    public var isPasscodeSet: Bool

    /// A device state; the default is unlocked, unlocked since boot, passcode set.
    public init(isLocked: Bool = false, hasBeenUnlockedSinceBoot: Bool = true, isPasscodeSet: Bool = true) {
        self.isLocked = isLocked
        self.hasBeenUnlockedSinceBoot = hasBeenUnlockedSinceBoot
        self.isPasscodeSet = isPasscodeSet
    }
}

/// Biometric hardware, enrollment and lockout.
public struct BiometryState: Hashable, Sendable {
    /// A biometric sensor is present and usable.
    public var isAvailable: Bool
    /// The hash of the enrolled set; nil when nothing is enrolled.
    public var enrollment: EnrollmentSetHash?
    /// Consecutive failed matches since the last success.
    public var failedAttempts: Int
    /// Biometry is locked out until the passcode is proved.
    public var isLockedOut: Bool

    /// Failed matches in a row that lock biometry out (Apple documents 5, spec §4.3).
    public static let lockoutThreshold = 5

    /// A biometry state; the default is no sensor.
    public init(
        isAvailable: Bool = false, enrollment: EnrollmentSetHash? = nil, failedAttempts: Int = 0,
        isLockedOut: Bool = false
    ) {
        self.isAvailable = isAvailable
        self.enrollment = enrollment
        self.failedAttempts = failedAttempts
        self.isLockedOut = isLockedOut
    }

    /// Why biometry cannot be used now, or nil when it can.
    public var unavailability: Unavailability? {
        if !isAvailable { return .biometryNotAvailable }
        if enrollment == nil { return .biometryNotEnrolled }
        if isLockedOut { return .biometryLockedOut }
        return nil
    }
}

/// A successful proof of one factor.
public struct Proof: Hashable, Sendable {
    /// Where a proof in a context comes from: proved for this context, or an earlier
    /// request's proof taken from where it was kept (the broker's memory, the CLI's proof
    /// records) and reused within a window. The evaluator never looks at it (a proof counts by
    /// its time); the audit trail says which proofs were reused (`proofReused: …`).
    public enum Origin: Hashable, Sendable {
        /// Proved for this context: an authenticator ran for it (``AuthenticationContext/recordProof(of:)``).
        case proved
        /// An earlier request's proof, reused within this request's window of `window` seconds.
        case reused(window: Int)
    }

    /// The factor proved.
    public var factor: Factor
    /// When it was proved.
    public var time: Timestamp
    /// For biometry, the enrollment set current when it was proved.
    public var enrollment: EnrollmentSetHash?
    /// Where this proof comes from; ``Origin/proved`` unless it was taken from an earlier request.
    public var origin: Origin

    /// A proof of `factor` at `time`, under `enrollment` for biometry, from `origin`.
    public init(factor: Factor, time: Timestamp, enrollment: EnrollmentSetHash? = nil, origin: Origin = .proved) {
        self.factor = factor
        self.time = time
        self.enrollment = enrollment
        self.origin = origin
    }

    /// This proof as an earlier request's, put in a context to be reused within `window`
    /// seconds (the request's reuse window).
    public func reused(within window: Int) -> Proof {
        var proof = self
        proof.origin = .reused(window: window)
        return proof
    }

    /// This proof as it was made, for keeping it for later requests (its origin forgotten).
    public var asProved: Proof {
        var proof = self
        proof.origin = .proved
        return proof
    }
}

/// The latest proof of each factor; one inline slot per factor.
public struct Proofs: Hashable, Sendable {
    private var passcode: Proof?
    private var biometry: Proof?
    private var companion: Proof?
    private var applicationPassword: Proof?

    /// No proofs.
    public init() {}

    /// The latest proof of `factor`, or nil.
    public subscript(factor: Factor) -> Proof? {
        get {
            switch factor {
            case .passcode: passcode
            case .biometry: biometry
            case .companion: companion
            case .applicationPassword: applicationPassword
            }
        }
        set {
            switch factor {
            case .passcode: passcode = newValue
            case .biometry: biometry = newValue
            case .companion: companion = newValue
            case .applicationPassword: applicationPassword = newValue
            }
        }
    }

    /// Records `proof` as the latest of its factor.
    public mutating func record(_ proof: Proof) { self[proof.factor] = proof }

    /// Every recorded proof.
    public var all: [Proof] { Factor.allCases.compactMap { self[$0] } }

    /// True when no proof is recorded (``all`` is empty), answered without making a list.
    public var isEmpty: Bool { passcode == nil && biometry == nil && companion == nil && applicationPassword == nil }
}

/// Whether the evaluator may ask for authentication (`LAContext.interactionNotAllowed`,
/// `kSecUseAuthenticationUI`).
public enum InteractionPolicy: String, CaseIterable, Hashable, Sendable, Codable {
    /// Prompting is allowed (the default).
    case allow
    /// An item that needs a prompt fails with `errSecInteractionNotAllowed`.
    case fail
    /// An item that needs a prompt is left out of a read's result (`errSecItemNotFound` when
    /// nothing is left); with any other operation it is `errSecParam`.
    case skip
}

/// Why a factor cannot be used.
public enum Unavailability: String, CaseIterable, Hashable, Sendable, Codable {
    /// No biometric sensor (`LAError.biometryNotAvailable`).
    case biometryNotAvailable
    /// Nothing enrolled (`LAError.biometryNotEnrolled`).
    case biometryNotEnrolled
    /// Too many failed matches (`LAError.biometryLockout`).
    case biometryLockedOut
    /// The biometry set changed since the item was added.
    case enrollmentChanged
    /// No passcode is set (`LAError.passcodeNotSet`).
    case passcodeNotSet
    /// Too many failed passcode attempts; Keygate's counter locked it out for a while.
    case passcodeLockedOut
    /// No companion device (`LAError.companionNotAvailable`).
    case companionNotAvailable

    /// The code followed by a sentence for people, for decision explanations.
    public var explanation: String {
        let sentence =
            switch self {
            case .biometryNotAvailable: "no biometric sensor is available"
            case .biometryNotEnrolled: "nothing is enrolled"
            case .biometryLockedOut: "biometry is locked out after too many failures"
            case .enrollmentChanged: "the enrollment set changed"
            case .passcodeNotSet: "no passcode is set"
            case .passcodeLockedOut: "the passcode is locked out after too many failures"
            case .companionNotAvailable: "no companion device is available"
            }
        return "\(rawValue) (\(sentence))"
    }
}
