/// Decides whether an operation on an item may go ahead: the heart of Keygate.
///
/// `evaluate` never throws and never allocates: every failure it can meet is a denial, and
/// its reasons are inline values rendered to text only on demand. It applies spec §2, §3,
/// §4.5 and §6.1:
///
/// - delete needs no authentication (`odel(true)`);
/// - add checks the class (deprecated `always` classes and `privateKeyUsage` are
///   `errSecParam`; `whenPasscodeSet` without a passcode is `errSecNotAvailable`; locked is
///   `errSecInteractionNotAllowed`, except that without a passcode no class key is locked)
///   and binds `biometryCurrentSet` to the enrolled set
///   (no biometry, or nothing enrolled, is `errSecAuthFailed`);
/// - read and update: a `whenPasscodeSet` item after the passcode is removed, and a
///   `biometryCurrentSet` item whose bound set changed, are `errSecItemNotFound` (the item is
///   invalidated); an unavailable class key is `errSecInteractionNotAllowed`; then the
///   constraint tree is matched against the context's fresh proofs. When it is not yet
///   satisfied, the decision is `authenticate` with exactly the factor combinations that
///   would satisfy it, or `errSecInteractionNotAllowed` when prompting is not allowed, or
///   `errSecAuthFailed` when no combination is possible (biometry locked out, not enrolled
///   or absent for a biometry-only tree; `userPresence` falls back to the passcode). A read
///   with `skip` leaves out every item that is not yet satisfied (`errSecItemNotFound`),
///   whether or not its factors could be used.
///
/// A proof is fresh when its age in whole seconds is at most the reuse window (as in the
/// `keygate evaluate` context file, where `secondsAgo ≤ reuseSeconds`): so a proof made for
/// this very request counts even with no reuse window, and one from the future never does.
public struct Evaluator: Sendable {
    /// Choices the spec leaves open.
    public struct Options: Hashable, Sendable {
        /// The status for a `biometryCurrentSet` item after an enrollment change. Apple's
        /// result is unconfirmed (spec §3); third-party reports say `errSecItemNotFound`,
        /// the default. `errSecAuthFailed` keeps the item instead of invalidating it.
        public var enrollmentChangeStatus: KeygateStatus

        /// The recommended choices.
        public init(enrollmentChangeStatus: KeygateStatus = .itemNotFound) {
            self.enrollmentChangeStatus = enrollmentChangeStatus
        }
    }

    /// The options in force.
    public let options: Options

    private static let biometryLeaves: Constraint.LeafSet = [.biometryAny, .biometryCurrentSet]

    /// An evaluator with `options`.
    public init(options: Options = Options()) {
        self.options = options
    }

    /// Decides `operation` on an item protected by `control`, against the live `context`.
    public func evaluate(_ control: AccessControl, operation: Operation, context: AuthenticationContext) -> Decision {
        evaluate(control, operation: operation, state: context.state, now: context.clock.now())
    }

    /// Decides `operation` on an item protected by `control`, against `state` at time `now`.
    public func evaluate(
        _ control: AccessControl, operation: Operation, state: AuthenticationState, now: Timestamp
    ) -> Decision {
        var reasons = DecisionReasons()
        if state.interaction == .skip && operation != .read {
            // kSecUseAuthenticationUISkip is only valid for SecItemCopyMatching (spec §5).
            reasons.append(.skipOutsideRead(operation))
            return Decision(.deny(.param), reasons: reasons)
        }
        switch operation {
        case .delete:
            reasons.append(.operationNeedsNoAuthentication(.delete))
            return Decision(.allow, reasons: reasons)
        case .add:
            return evaluateAdd(control, state: state, reasons: &reasons)
        case .read, .update, .sign, .computeKey:
            return evaluateAccess(control, operation: operation, state: state, now: now, reasons: &reasons)
        }
    }

    // MARK: - Add

    private func evaluateAdd(
        _ control: AccessControl, state: AuthenticationState, reasons: inout DecisionReasons
    ) -> Decision {
        let protection = control.protection
        if protection.isDeprecated {
            reasons.append(.deprecatedClass(protection))
            return Decision(.deny(.param), reasons: reasons)
        }
        if control.constraint(for: .add) == nil {
            reasons.append(.privateKeyUsage)
            return Decision(.deny(.param), reasons: reasons)
        }
        if protection.availability == .whenUnlockedWithPasscode, !state.device.isPasscodeSet {
            reasons.append(.classUnavailable(protection, .passcodeNotSet))
            return Decision(.deny(.notAvailable), reasons: reasons)
        }
        if let denial = classCheck(protection, state: state, reasons: &reasons) { return denial }

        var binding: EnrollmentSetHash?
        let leaves = control.constraint.leaves
        if !leaves.isDisjoint(with: Self.biometryLeaves) {
            if !state.biometry.isAvailable {
                reasons.append(.factorUnavailable(.biometry, .biometryNotAvailable))
                return Decision(.deny(.authFailed), reasons: reasons)
            }
            guard let enrollment = state.biometry.enrollment else {
                reasons.append(.factorUnavailable(.biometry, .biometryNotEnrolled))
                return Decision(.deny(.authFailed), reasons: reasons)
            }
            if control.needsBinding {
                binding = enrollment
                reasons.append(.boundToEnrollment)
            }
        }
        reasons.append(.operationNeedsNoAuthentication(.add))
        return Decision(.allow, reasons: reasons, bindingEnrollment: binding)
    }

    // MARK: - Read and update

    private func evaluateAccess(
        _ control: AccessControl, operation: Operation, state: AuthenticationState, now: Timestamp,
        reasons: inout DecisionReasons
    ) -> Decision {
        let protection = control.protection
        if protection.availability == .whenUnlockedWithPasscode, !state.device.isPasscodeSet {
            reasons.append(.passcodeRemoved)
            return Decision(.deny(.itemNotFound), reasons: reasons, denial: .invalidated(.passcodeRemoved))
        }
        guard let constraint = control.constraint(for: operation) else {
            reasons.append(operation.isKeyOperation ? .operationNotGranted(operation) : .privateKeyUsage)
            return Decision(.deny(.authFailed), reasons: reasons)
        }
        if let denial = classCheck(protection, state: state, reasons: &reasons) { return denial }

        // A bound current-set leaf whose set changed: required → the item is invalidated;
        // one alternative among others → that alternative is simply unusable. Without a
        // usable sensor the set cannot be read, so biometry is merely unavailable.
        var currentSetUsable = true
        if constraint.leaves.contains(.biometryCurrentSet) {
            guard let bound = constraint.boundEnrollment else {
                reasons.append(.notBound)
                return Decision(.deny(.param), reasons: reasons)
            }
            if state.biometry.isAvailable && bound != state.biometry.enrollment {
                if constraint.threshold == constraint.leaves.count {
                    reasons.append(.enrollmentChanged)
                    // Only "not found" removes the item; another configured status merely refuses it.
                    let status = options.enrollmentChangeStatus
                    return Decision(
                        .deny(status), reasons: reasons,
                        denial: status == .itemNotFound ? .invalidated(.enrollmentChanged) : nil)
                }
                currentSetUsable = false
            }
        }

        switch constraint.kind {
        case .deny:
            reasons.append(.thresholdUnreachable(possible: 0, required: 1))
            return Decision(.deny(.authFailed), reasons: reasons)
        case .allow where !control.requiresApplicationPassword:
            reasons.append(.noConstraint)
            return Decision(.allow, reasons: reasons)
        case .allow, .leaves:
            break
        }

        let matcher = LeafMatcher(now: now, bound: constraint.boundEnrollment)
        var satisfied = 0
        var candidates = Constraint.LeafSet()
        var bit: UInt8 = 1
        while bit != 0 && bit <= Constraint.LeafSet.companion.rawValue {
            let leaf = Constraint.LeafSet(rawValue: bit)
            bit <<= 1
            guard constraint.leaves.contains(leaf) else { continue }
            let usable = leaf != .biometryCurrentSet || currentSetUsable
            switch matcher.match(leaf, usable: usable, state: state, reasons: &reasons) {
            case .satisfied: satisfied += 1
            case .promptable: candidates.insert(leaf)
            case .impossible: break
            }
        }
        let required = constraint.kind == .leaves ? constraint.threshold : 0
        let needed = max(required - satisfied, 0)
        var passwordNeeded = false
        if control.requiresApplicationPassword {
            passwordNeeded = matcher.match(applicationPasswordIn: state, reasons: &reasons) != .satisfied
        }
        if needed == 0 && !passwordNeeded {
            if required > 0 { reasons.append(.thresholdMet(satisfied: Int8(satisfied), required: Int8(required))) }
            return Decision(.allow, reasons: reasons)
        }
        let unreachable = needed > candidates.count
        if unreachable {
            reasons.append(
                .thresholdUnreachable(possible: Int8(satisfied + candidates.count), required: Int8(required)))
        }
        if state.interaction == .skip {
            // The item needs authentication, so it is left out of the result; alone, that is
            // "not found" (spec §5, §6.1). Apple's server drops such rows before
            // LocalAuthentication runs, so a factor that cannot be used (no sensor, nothing
            // enrolled, locked out) or an invalidated context changes nothing.
            reasons.append(.interactionNotAllowed(.skip))
            return Decision(.deny(.itemNotFound), reasons: reasons, denial: .skipped)
        }
        if unreachable {
            return Decision(.deny(.authFailed), reasons: reasons)
        }
        if state.isInvalidated {
            reasons.append(.contextInvalidated)
            return Decision(.deny(.authFailed), reasons: reasons)
        }
        if state.interaction == .fail {
            reasons.append(.interactionNotAllowed(.fail))
            return Decision(.deny(.interactionNotAllowed), reasons: reasons)
        }
        let requirement = Self.requirement(
            choosing: needed, from: candidates, state: state, now: now, plus: passwordNeeded ? .applicationPassword : []
        )
        return Decision(.authenticate(requirement), reasons: reasons)
    }

    /// Denies when the protection class's key is unavailable; records the check either way.
    ///
    /// Without a passcode the class keys are not protected by one, so locking the device
    /// (or not having unlocked it since boot) makes no `whenUnlocked` or `afterFirstUnlock`
    /// class unavailable. `whenPasscodeSet` never gets here without a passcode: its items are
    /// gone (read, update) or cannot be added.
    private func classCheck(
        _ protection: ProtectionClass, state: AuthenticationState, reasons: inout DecisionReasons
    ) -> Decision? {
        let device = state.device
        let why: DecisionReason.ClassUnavailability? =
            switch protection.availability {
            case .whenUnlockedWithPasscode: device.isLocked ? .deviceLocked : nil
            case .whenUnlocked: device.isLocked && device.isPasscodeSet ? .deviceLocked : nil
            case .afterFirstUnlock:
                device.hasBeenUnlockedSinceBoot || !device.isPasscodeSet ? nil : .notUnlockedSinceBoot
            case .always: nil
            }
        if let why {
            reasons.append(.classUnavailable(protection, why))
            return Decision(.deny(.interactionNotAllowed), reasons: reasons)
        }
        reasons.append(.classAvailable(protection))
        return nil
    }

    /// Every way to prove `needed` more of `candidates`, each with `extra` added.
    private static func requirement(
        choosing needed: Int, from candidates: Constraint.LeafSet, state: AuthenticationState, now: Timestamp,
        plus extra: FactorSet
    ) -> Requirement {
        var requirement = Requirement()
        if needed == 0 {
            requirement.append(extra)
            return requirement
        }
        // Enumerate the subsets of the candidate leaves of size `needed`, in increasing order
        // of their bit patterns: `(subset - mask) & mask` steps to the next subset of `mask`
        // and wraps to 0 after the last one, so only the candidates' subsets are visited.
        let mask = candidates.rawValue
        var subset: UInt8 = 0
        var sawOtherThanBiometry = false
        var outOfOrder = false
        while true {
            subset = (subset &- mask) & mask
            if subset == 0 { break }
            guard subset.nonzeroBitCount == needed else { continue }
            var combination = extra
            var policyLeaf = false
            for shift in 0..<5 where subset & (1 << shift) != 0 {
                switch Constraint.LeafSet(rawValue: 1 << shift) {
                case .passcode: combination.insert(.passcode)
                case .biometryAny, .biometryCurrentSet: combination.insert(.biometry)
                case .companion: combination.insert(.companion)
                default: policyLeaf = true
                }
            }
            if policyLeaf {
                // userPresence never combines with other leaves: biometry first, passcode as fallback.
                if state.biometry.unavailability == nil && !state.attempts.biometry.isLockedOut(at: now) {
                    outOfOrder = outOfOrder || sawOtherThanBiometry
                    requirement.append(combination.union(.biometry))
                }
                if state.device.isPasscodeSet && !state.attempts.passcode.isLockedOut(at: now) {
                    sawOtherThanBiometry = sawOtherThanBiometry || !combination.contains(.biometry)
                    requirement.append(combination.union(.passcode))
                }
            } else {
                let usesBiometry = combination.contains(.biometry)
                outOfOrder = outOfOrder || (usesBiometry && sawOtherThanBiometry)
                sawOtherThanBiometry = sawOtherThanBiometry || !usesBiometry
                requirement.append(combination)
            }
        }
        // Reordering is needed only when an alternative with biometry came after one without.
        if outOfOrder { requirement.orderBiometryFirst() }
        return requirement
    }
}

/// Matches single leaves against the proofs of a state; records one or two reasons per leaf.
/// The state is passed to each call (by reference, as Swift passes large values), never stored,
/// so matching copies nothing.
private struct LeafMatcher {
    enum Match { case satisfied, promptable, impossible }

    let now: Timestamp
    let bound: EnrollmentSetHash?

    func match(
        _ leaf: Constraint.LeafSet, usable: Bool, state: AuthenticationState, reasons: inout DecisionReasons
    ) -> Match {
        // Each leaf works out only the unavailability it needs (the evaluator's hot path).
        switch leaf {
        case .passcode:
            return factor(.passcode, unavailable: passcodeUnavailability(state), state: state, reasons: &reasons)
        case .biometryAny:
            return factor(.biometry, unavailable: biometryUnavailability(state), state: state, reasons: &reasons)
        case .biometryCurrentSet:
            let unavailable = usable ? biometryUnavailability(state) : .enrollmentChanged
            return factor(.biometry, unavailable: unavailable, requireBound: true, state: state, reasons: &reasons)
        case .companion:
            let unavailable: Unavailability? = state.isCompanionAvailable ? nil : .companionNotAvailable
            return factor(.companion, unavailable: unavailable, state: state, reasons: &reasons)
        default:
            // userPresence: a fresh biometry or passcode proof satisfies it.
            let biometry = factor(
                .biometry, unavailable: state.biometry.unavailability, state: state, reasons: &reasons)
            if biometry == .satisfied { return .satisfied }
            let passcode = factor(
                .passcode, unavailable: passcodeUnavailability(state), state: state, reasons: &reasons)
            if passcode == .satisfied { return .satisfied }
            return biometry == .promptable || passcode == .promptable ? .promptable : .impossible
        }
    }

    /// Why the passcode cannot be used now (none set, or locked out), or nil.
    private func passcodeUnavailability(_ state: AuthenticationState) -> Unavailability? {
        if !state.device.isPasscodeSet { return .passcodeNotSet }
        return state.attempts.passcode.isLockedOut(at: now) ? .passcodeLockedOut : nil
    }

    /// Why biometry cannot be used now (no sensor, nothing enrolled, locked out), or nil.
    private func biometryUnavailability(_ state: AuthenticationState) -> Unavailability? {
        state.biometry.unavailability ?? (state.attempts.biometry.isLockedOut(at: now) ? .biometryLockedOut : nil)
    }

    func match(applicationPasswordIn state: AuthenticationState, reasons: inout DecisionReasons) -> Match {
        factor(.applicationPassword, unavailable: nil, state: state, reasons: &reasons)
    }

    /// One reason per factor: unavailable wins over any proof (fail closed), then a fresh
    /// proof, a proof under another enrollment set, a stale proof, or no proof.
    private func factor(
        _ factor: Factor, unavailable: Unavailability?, requireBound: Bool = false, state: AuthenticationState,
        reasons: inout DecisionReasons
    ) -> Match {
        if let unavailable {
            reasons.append(.factorUnavailable(factor, unavailable))
            return .impossible
        }
        guard !state.isInvalidated, let time = state.proofs[factor]?.time else {
            reasons.append(.factorMissing(factor))
            return .promptable
        }
        let seconds = Int32(clamping: time.wholeSeconds(until: now))
        if requireBound && state.proofs[factor]?.enrollment != bound {
            reasons.append(.proofForOtherEnrollment)
        } else if state.isFresh(time, at: now) {
            reasons.append(.factorProved(factor, secondsAgo: seconds))
            return .satisfied
        } else {
            let reuse = Int32(clamping: state.reuseSeconds)
            reasons.append(.factorStale(factor, secondsAgo: time > now ? -1 : seconds, reuseSeconds: reuse))
        }
        return .promptable
    }
}
