/// One fact that led to a decision: which check passed or failed, which factor was
/// proved, missing or stale. Reasons are small values (no strings, no secrets); their
/// text is rendered only when asked for, as ``description``, which starts with ``code``.
public enum DecisionReason: Hashable, Sendable {
    /// The access control has no constraint (`dacl(true)`): everything is allowed.
    case noConstraint
    /// The operation needs no authentication: delete (`odel(true)`) or add (`oe(true)`).
    case operationNeedsNoAuthentication(Operation)
    /// The protection class's key is available.
    case classAvailable(ProtectionClass)
    /// The protection class's key is not available, and why.
    case classUnavailable(ProtectionClass, ClassUnavailability)
    /// A deprecated `always` class was given for a new item.
    case deprecatedClass(ProtectionClass)
    /// A `privateKeyUsage` access control grants no decryption or password-item add.
    case privateKeyUsage
    /// The access control has no entry for a key operation and no `dacl` (a constraint made
    /// without `privateKeyUsage`, spec §9.5.5): LocalAuthentication's −1009, errSecAuthFailed.
    case operationNotGranted(Operation)
    /// A `whenPasscodeSetThisDeviceOnly` item after the passcode was removed: it is gone.
    case passcodeRemoved
    /// A `biometryCurrentSet` item after the enrollment set changed: it is invalidated.
    case enrollmentChanged
    /// A `biometryCurrentSet` access control that was never bound to an enrollment set.
    case notBound
    /// Add bound the `biometryCurrentSet` constraint to the current enrollment set.
    case boundToEnrollment
    /// A factor was proved `secondsAgo` seconds ago, within the reuse window.
    case factorProved(Factor, secondsAgo: Int32)
    /// A factor the constraint needs has not been proved in this context.
    case factorMissing(Factor)
    /// A factor was proved, but longer ago than the reuse window allows.
    case factorStale(Factor, secondsAgo: Int32, reuseSeconds: Int32)
    /// A biometry proof was made under another enrollment set than the item is bound to.
    case proofForOtherEnrollment
    /// A factor the constraint names cannot be used now, and why.
    case factorUnavailable(Factor, Unavailability)
    /// Enough leaves of the constraint are satisfied.
    case thresholdMet(satisfied: Int8, required: Int8)
    /// Not enough leaves can be satisfied even with prompting.
    case thresholdUnreachable(possible: Int8, required: Int8)
    /// A prompt is needed, but the interaction policy forbids it (`fail`) or leaves the item out (`skip`).
    case interactionNotAllowed(InteractionPolicy)
    /// The `skip` interaction policy was given for an operation other than read (copy).
    case skipOutsideRead(Operation)
    /// The context was invalidated; its proofs no longer count.
    case contextInvalidated
    /// The evaluator met an inconsistent input and failed closed.
    case internalFailure

    /// Why a protection class's key is unavailable.
    public enum ClassUnavailability: String, CaseIterable, Hashable, Sendable, Codable {
        /// The device is locked.
        case deviceLocked
        /// The device has not been unlocked since boot.
        case notUnlockedSinceBoot
        /// No passcode is set.
        case passcodeNotSet
    }

    /// The kinds of reason, one per case, each named by its code: what a test asserts
    /// (`because: .classUnavailable`) without spelling a string.
    public enum Code: String, Hashable, Sendable, CaseIterable {
        /// The `noConstraint` reason.
        case noConstraint
        /// The `operationNeedsNoAuthentication` reason.
        case operationNeedsNoAuthentication
        /// The `classAvailable` reason.
        case classAvailable
        /// The `classUnavailable` reason.
        case classUnavailable
        /// The `deprecatedClass` reason.
        case deprecatedClass
        /// The `privateKeyUsage` reason.
        case privateKeyUsage
        /// The `operationNotGranted` reason.
        case operationNotGranted
        /// The `passcodeRemoved` reason.
        case passcodeRemoved
        /// The `enrollmentChanged` reason.
        case enrollmentChanged
        /// The `notBound` reason.
        case notBound
        /// The `boundToEnrollment` reason.
        case boundToEnrollment
        /// The `factorProved` reason.
        case factorProved
        /// The `factorMissing` reason.
        case factorMissing
        /// The `factorStale` reason.
        case factorStale
        /// The `proofForOtherEnrollment` reason.
        case proofForOtherEnrollment
        /// The `factorUnavailable` reason.
        case factorUnavailable
        /// The `thresholdMet` reason.
        case thresholdMet
        /// The `thresholdUnreachable` reason.
        case thresholdUnreachable
        /// The `interactionNotAllowed` reason.
        case interactionNotAllowed
        /// The `skipOutsideRead` reason.
        case skipOutsideRead
        /// The `contextInvalidated` reason.
        case contextInvalidated
        /// The `internalFailure` reason.
        case internalFailure
    }

    /// The kind of this reason.
    public var kind: Code {
        switch self {
        case .noConstraint: .noConstraint
        case .operationNeedsNoAuthentication: .operationNeedsNoAuthentication
        case .classAvailable: .classAvailable
        case .classUnavailable: .classUnavailable
        case .deprecatedClass: .deprecatedClass
        case .privateKeyUsage: .privateKeyUsage
        case .operationNotGranted: .operationNotGranted
        case .passcodeRemoved: .passcodeRemoved
        case .enrollmentChanged: .enrollmentChanged
        case .notBound: .notBound
        case .boundToEnrollment: .boundToEnrollment
        case .factorProved: .factorProved
        case .factorMissing: .factorMissing
        case .factorStale: .factorStale
        case .proofForOtherEnrollment: .proofForOtherEnrollment
        case .factorUnavailable: .factorUnavailable
        case .thresholdMet: .thresholdMet
        case .thresholdUnreachable: .thresholdUnreachable
        case .interactionNotAllowed: .interactionNotAllowed
        case .skipOutsideRead: .skipOutsideRead
        case .contextInvalidated: .contextInvalidated
        case .internalFailure: .internalFailure
        }
    }

    /// A stable identifier of the kind of reason, such as `classUnavailable`.
    public var code: String { kind.rawValue }
}

extension DecisionReason: CustomStringConvertible {
    /// `code: explanation`, for example `classUnavailable: class aku needs an unlocked device; the device is locked`.
    public var description: String { "\(code): \(explanation)" }

    /// The explanation alone, without the code.
    public var explanation: String {
        switch self {
        case .noConstraint:
            return "the access control has no constraint (dacl(true))"
        case .operationNeedsNoAuthentication(let operation):
            return "\(operation) needs no authentication (\(operation == .delete ? "odel" : "oe")(true))"
        case .classAvailable(let protection):
            return "protection class \(protection.rawValue) (\(protection.name)) is available"
        case .classUnavailable(let protection, let why):
            let need =
                switch protection.availability {
                case .whenUnlockedWithPasscode: "an unlocked device with a passcode"
                case .whenUnlocked: "an unlocked device"
                case .afterFirstUnlock: "a first unlock since boot"
                case .always: "nothing"
                }
            let state =
                switch why {
                case .deviceLocked: "the device is locked"
                case .notUnlockedSinceBoot: "the device has not been unlocked since boot"
                case .passcodeNotSet: "no passcode is set"
                }
            return "class \(protection.rawValue) needs \(need); \(state)"
        case .deprecatedClass(let protection):
            return "\(protection.name) is deprecated and refused for new items"
        case .privateKeyUsage:
            return "a privateKeyUsage access control grants key operations only, not password items"
        case .operationNotGranted(let operation):
            return "ACL operation is not allowed: '\(operation.aclName)' (a constraint without privateKeyUsage)"
        case .passcodeRemoved:
            return "the passcode was removed, so this whenPasscodeSetThisDeviceOnly item no longer exists"
        case .enrollmentChanged:
            return "the biometry enrollment set changed since the item was added, so the item is invalidated"
        case .notBound:
            return "the biometryCurrentSet constraint is not bound to an enrollment set"
        case .boundToEnrollment:
            return "bound the biometryCurrentSet constraint to the current enrollment set"
        case .factorProved(let factor, let seconds):
            return "\(factor) proved \(seconds) s ago"
        case .factorMissing(let factor):
            return "\(factor) not proved in this context"
        case .factorStale(let factor, let seconds, let reuse):
            return seconds < 0
                ? "\(factor) proof is dated in the future; not trusted"
                : "\(factor) proved \(seconds) s ago, outside the \(reuse) s reuse window"
        case .proofForOtherEnrollment:
            return "biometry was proved under another enrollment set than the item is bound to"
        case .factorUnavailable(let factor, let why):
            return "\(factor) cannot be used: \(why.explanation)"
        case .thresholdMet(let satisfied, let required):
            return "\(satisfied) of \(required) required constraints satisfied"
        case .thresholdUnreachable(let possible, let required):
            return "only \(possible) of \(required) required constraints can be satisfied"
        case .interactionNotAllowed(.skip):
            return "authentication is needed and the interaction policy is skip: the item is left out"
        case .interactionNotAllowed(let policy):
            return "authentication is needed but the interaction policy is \(policy.rawValue)"
        case .skipOutsideRead(let operation):
            return "the skip interaction policy is valid for reads only, not for \(operation)"
        case .contextInvalidated:
            return "the authentication context was invalidated"
        case .internalFailure:
            return "the evaluator met an inconsistent input and denied (fail closed)"
        }
    }
}

/// Up to eight reasons, stored inline so building a decision never allocates.
public struct DecisionReasons: RandomAccessCollection, Hashable, Sendable {
    private var slots:
        (
            DecisionReason?, DecisionReason?, DecisionReason?, DecisionReason?,
            DecisionReason?, DecisionReason?, DecisionReason?, DecisionReason?
        ) = (nil, nil, nil, nil, nil, nil, nil, nil)
    private var stored = 0

    /// The most reasons a decision keeps. The evaluator records at most one reason per check
    /// (class, each factor, the threshold, the interaction policy): never more than seven.
    public static let capacity = 8

    /// No reasons.
    public init() {}

    /// These reasons, in order (past ``capacity`` they are dropped).
    public init(_ reasons: [DecisionReason]) {
        for reason in reasons { append(reason) }
    }

    mutating func append(_ reason: DecisionReason) {
        switch stored {
        case 0: slots.0 = reason
        case 1: slots.1 = reason
        case 2: slots.2 = reason
        case 3: slots.3 = reason
        case 4: slots.4 = reason
        case 5: slots.5 = reason
        case 6: slots.6 = reason
        case 7: slots.7 = reason
        default: return
        }
        stored += 1
    }

    /// The first index.
    public var startIndex: Int { 0 }
    /// One past the last index.
    public var endIndex: Int { stored }

    /// The reason at `position`.
    public subscript(position: Int) -> DecisionReason {
        let slot: DecisionReason? =
            switch position {
            case 0: slots.0
            case 1: slots.1
            case 2: slots.2
            case 3: slots.3
            case 4: slots.4
            case 5: slots.5
            case 6: slots.6
            case 7: slots.7
            default: nil
            }
        guard let slot else { preconditionFailure("reason index \(position) out of range") }
        return slot
    }

    /// Equal when they hold the same reasons in the same order.
    public static func == (lhs: DecisionReasons, rhs: DecisionReasons) -> Bool {
        lhs.elementsEqual(rhs)
    }

    /// Hashes the reasons in order.
    public func hash(into hasher: inout Hasher) {
        for reason in self { hasher.combine(reason) }
    }
}
