/// What a policy set says about one request, with the ids of the rules that decided it.
///
/// Combination (deterministic, documented in `Policies/README.md`): the item's own access
/// control AND every matching rule. Any matching `forbid` wins; then any `require at-least`
/// the item's access control does not meet denies; otherwise the operation proceeds with
/// every extra factor requirement and the tightest freshness bound of the matching rules. No
/// matching rule means the item's own access control alone.
public struct PolicyDecision: Hashable, Sendable {
    /// The verdict.
    public enum Outcome: Hashable, Sendable {
        /// Nothing objects beyond the item's own access control (and the conditions, if any).
        case allow
        /// Denied with this status (`errSecDeniedByPolicy`-like ``KeygateStatus/deniedByPolicy``,
        /// or `errSecMissingEntitlement` for an access group).
        case deny(KeygateStatus)
    }

    /// An extra factor requirement and the rule that set it.
    public struct FactorRequirement: Hashable, Sendable {
        /// The rule's id.
        public let rule: String
        /// One of these factor sets must be proved.
        public let requirement: Requirement
    }

    /// The verdict.
    public internal(set) var outcome: Outcome = .allow
    /// Every rule whose selectors match the request, in rule order.
    public internal(set) var matchedRules: [String] = []
    /// The rules that determined the outcome: the forbidding or violated rules for a denial,
    /// else every matching rule with an effect on this operation.
    public internal(set) var decidingRules: [String] = []
    /// Extra factor requirements, all of which must be met.
    public internal(set) var requirements: [FactorRequirement] = []
    /// The tightest freshness bound in seconds, if any rule sets one.
    public internal(set) var freshWithin: Int?
    /// The rules whose freshness bound is ``freshWithin``.
    public internal(set) var freshRules: [String] = []
    /// What each deciding rule did, in rule order: for a denial the forbidding or violated
    /// rules' reasons, else those of every rule with an effect on this operation.
    public internal(set) var reasons: [PolicyReason] = []

    /// No rule objects or adds anything: the item's own access control alone.
    public init() {}

    /// A decision made outside a policy set (an `OrganisationPolicy` written in code): denied
    /// with `status` by `reasons` when one of them denies, else allowed with every requirement
    /// the reasons add and the tightest freshness bound they set.
    public init(reasons: [PolicyReason], status: KeygateStatus = .deniedByPolicy) {
        let denying = reasons.filter(\.denies)
        let deciding = denying.isEmpty ? reasons : denying
        self.reasons = deciding
        for reason in deciding where decidingRules.last != reason.ruleID { decidingRules.append(reason.ruleID) }
        matchedRules = decidingRules
        if !denying.isEmpty {
            outcome = .deny(status)
            return
        }
        for reason in deciding {
            switch reason.effect {
            case .alsoRequires(let requirement):
                requirements.append(FactorRequirement(rule: reason.ruleID, requirement: requirement))
            case .freshWithin(let seconds):
                if freshWithin.map({ seconds < $0 }) ?? true {
                    freshWithin = seconds
                    freshRules = [reason.ruleID]
                } else if freshWithin == seconds {
                    freshRules.append(reason.ruleID)
                }
            case .forbids, .minimumMet, .minimumNotMet, .minimumForItemsWritten:
                break
            }
        }
    }

    /// True when the outcome is a denial.
    public var isDenied: Bool {
        if case .deny = outcome { return true }
        return false
    }

    /// Whether nothing beyond the item's own access control applies (no rule had an effect).
    public var addsNothing: Bool { !isDenied && decidingRules.isEmpty }

    /// The reasons, in one line.
    public var summary: String {
        reasons.isEmpty
            ? "no rule applies: the item's own access control alone"
            : reasons.map(\.description).joined(separator: "; ")
    }
}

/// Whether a program may use an access group, and which grants said so.
public struct EntitlementDecision: Hashable, Sendable {
    /// True when the program may use the group.
    public let isAllowed: Bool
    /// The grants that decided: the matching ones when allowed, every grant of the group when not;
    /// empty when no grant names the group (it behaves as without policies).
    public let ruleIDs: [String]
    /// A sentence for errors and audit records.
    public let explanation: String

    /// A decision on a group.
    public init(isAllowed: Bool, ruleIDs: [String], explanation: String) {
        self.isAllowed = isAllowed
        self.ruleIDs = ruleIDs
        self.explanation = explanation
    }

    /// The group is allowed because no grant names it.
    public static func ungranted(_ accessGroup: String) -> EntitlementDecision {
        EntitlementDecision(isAllowed: true, ruleIDs: [], explanation: "no grant names '\(accessGroup)'")
    }
}
