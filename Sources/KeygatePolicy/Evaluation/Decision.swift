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

    /// What the caller may do.
    public let outcome: Outcome
    /// Why, in the order the checks ran.
    public let reasons: DecisionReasons
    /// For an allowed add: the enrollment set to bind the item's `biometryCurrentSet` constraint to.
    public let bindingEnrollment: EnrollmentSetHash?

    /// A decision.
    public init(_ outcome: Outcome, reasons: DecisionReasons, bindingEnrollment: EnrollmentSetHash? = nil) {
        self.outcome = outcome
        self.reasons = reasons
        self.bindingEnrollment = bindingEnrollment
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

    /// True when the item no longer exists for this request: its passcode was removed or its
    /// bound enrollment set changed. A store removes such an item.
    public var invalidatesItem: Bool {
        reasons.contains(.passcodeRemoved) || reasons.contains(.enrollmentChanged) && status == .itemNotFound
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
