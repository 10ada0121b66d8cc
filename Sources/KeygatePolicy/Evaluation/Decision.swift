/// The evaluator's answer for one request, with the reasons that led to it.
///
/// A value that never holds secret bytes and never allocates to build.
public struct Decision: Hashable, Sendable {
    /// What the caller may do.
    public enum Outcome: Hashable, Sendable {
        /// Proceed.
        case allow
        /// Refuse with this status.
        case deny(KeygateStatus)
        /// Prove one of the requirement's alternatives, then evaluate again.
        case authenticate(Requirement)
    }

    /// What a denial means beyond its status, when the facade must act on it.
    public enum Denial: Hashable, Sendable {
        /// The item no longer exists for this request; a store removes it.
        case invalidated(Invalidation)
        /// The item needs a prompt and the interaction policy is `skip`: a read leaves it out.
        case skipped
    }

    /// Why an item no longer exists.
    public enum Invalidation: Hashable, Sendable {
        /// A `whenPasscodeSetThisDeviceOnly` item after the passcode was removed.
        case passcodeRemoved
        /// A `biometryCurrentSet` item after the enrollment set changed.
        case enrollmentChanged
    }

    /// What the caller may do.
    public let outcome: Outcome
    /// For a denial the facade must act on (an invalidated item, a skipped one): which; nil otherwise.
    public let denial: Denial?
    /// Why, in the order the checks ran.
    public let reasons: DecisionReasons
    /// For an allowed add: the enrollment set to bind the item's `biometryCurrentSet` constraint to.
    public let bindingEnrollment: EnrollmentSetHash?

    /// A decision.
    public init(
        _ outcome: Outcome, reasons: DecisionReasons, bindingEnrollment: EnrollmentSetHash? = nil,
        denial: Denial? = nil
    ) {
        self.outcome = outcome
        self.reasons = reasons
        self.bindingEnrollment = bindingEnrollment
        self.denial = denial
    }

    /// True for `allow`.
    public var isAllowed: Bool { outcome == .allow }

    /// The status of a denial, nil otherwise.
    public var status: KeygateStatus? {
        if case .deny(let status) = outcome { return status }
        return nil
    }

    /// The requirement of an `authenticate` decision, nil otherwise.
    public var requirement: Requirement? {
        if case .authenticate(let requirement) = outcome { return requirement }
        return nil
    }

    /// True when the item no longer exists for this request (``denial`` is `.invalidated`):
    /// its passcode was removed or its bound enrollment set changed. A store removes such an item.
    public var invalidatesItem: Bool {
        if case .invalidated = denial { return true }
        return false
    }

    /// The reasons that decided, in words: every reason but the routine class check.
    public var explanation: String {
        reasons.filter { $0.code != "classAvailable" }.map(\.explanation).joined(separator: "; ")
    }

}

extension Decision: CustomStringConvertible {
    /// `deny errSecInteractionNotAllowed -25308 [classUnavailable: …]`.
    public var description: String {
        let head =
            switch outcome {
            case .allow: "allow"
            case .deny(let status): "deny \(status)"
            case .authenticate(let requirement): "authenticate \(requirement)"
            }
        return head + " [" + reasons.map(\.description).joined(separator: "; ") + "]"
    }
}
