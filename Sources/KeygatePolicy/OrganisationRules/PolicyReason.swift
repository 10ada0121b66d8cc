/// Why one rule took part in a decision, as a value: the rule's id, the operation, and what the
/// rule did. A ``PolicyDecision`` lists the reasons that decided it, as cedar's response lists
/// the policies that determined it; an audit record's note carries them, and the text each
/// reads as (``description``) is what `keygate policy explain` and errors show.
public struct PolicyReason: Hashable, Sendable, CustomStringConvertible {
    /// What the rule did.
    public enum Effect: Hashable, Sendable {
        /// The rule forbids the operation.
        case forbids
        /// The rule's minimum, met by the item's access control.
        case minimumMet(String)
        /// The rule's minimum, which the item's access control (its minimum text, nil when the
        /// item has none) does not meet: a denial.
        case minimumNotMet(String, item: String?)
        /// The rule's minimum, which applies to items written (the request named no access control).
        case minimumForItemsWritten(String)
        /// Only proofs at most this many seconds old count.
        case freshWithin(seconds: Int)
        /// This requirement must also be proved.
        case alsoRequires(Requirement)
    }

    /// The id of the rule (its name, unique across a policy set).
    public let ruleID: String
    /// The operation decided.
    public let action: PolicyAction
    /// What the rule did.
    public let effect: Effect

    /// A reason.
    public init(ruleID: String, action: PolicyAction, effect: Effect) {
        (self.ruleID, self.action, self.effect) = (ruleID, action, effect)
    }

    /// Whether this reason denies the operation.
    public var denies: Bool {
        switch effect {
        case .forbids, .minimumNotMet: true
        case .minimumMet, .minimumForItemsWritten, .freshWithin, .alsoRequires: false
        }
    }

    /// One sentence naming the rule and the operation: "rule 'no-export' forbids export".
    /// ``init(description:)`` reads it back.
    public var description: String {
        let rule = "rule '\(ruleID)'"
        switch effect {
        case .forbids: return "\(rule) forbids \(action)"
        case .minimumMet(let minimum): return "\(rule) requires at least \"\(minimum)\" for \(action): met"
        case .minimumNotMet(let minimum, let item):
            let weaker = item.map { "\"\($0)\"" } ?? "the item"
            return "\(rule) requires at least \"\(minimum)\" for \(action); \(weaker) is weaker"
        case .minimumForItemsWritten(let minimum):
            return "\(rule) requires at least \"\(minimum)\" for \(action), of items written"
        case .freshWithin(let seconds): return "\(rule) requires proofs no older than \(seconds)s for \(action)"
        case .alsoRequires(let requirement): return "\(rule) also requires \(requirement) for \(action)"
        }
    }
}

extension PolicyReason {
    /// The reason whose ``description`` is `text`, or nil when no reason reads as it.
    public init?(description text: String) {
        guard text.hasPrefix("rule '") else { return nil }
        let body = text.dropFirst("rule '".count)
        guard let read = Self.read(body) else { return nil }
        self.init(ruleID: read.ruleID, action: read.action, effect: read.effect)
        guard description == text else { return nil }
    }

    /// The parts of a reason's text after `rule '`: the id up to the first marker of an
    /// effect, then that effect's own words.
    private static func read(_ body: Substring) -> (ruleID: String, action: PolicyAction, effect: Effect)? {
        if let marker = body.firstRange(of: "' forbids "),
            let action = PolicyAction(rawValue: String(body[marker.upperBound...]))
        {
            return (String(body[..<marker.lowerBound]), action, .forbids)
        }
        if let marker = body.firstRange(of: "' requires at least \""),
            let (action, effect) = minimum(body[marker.upperBound...])
        {
            return (String(body[..<marker.lowerBound]), action, effect)
        }
        if let marker = body.firstRange(of: "' requires proofs no older than ") {
            let rest = body[marker.upperBound...]
            guard let unit = rest.firstRange(of: "s for "), let seconds = Int(rest[..<unit.lowerBound]),
                let action = PolicyAction(rawValue: String(rest[unit.upperBound...]))
            else { return nil }
            return (String(body[..<marker.lowerBound]), action, .freshWithin(seconds: seconds))
        }
        if let marker = body.firstRange(of: "' also requires ") {
            let rest = body[marker.upperBound...]
            guard let last = rest.ranges(of: " for ").last,
                let requirement = Requirement(description: String(rest[..<last.lowerBound])),
                let action = PolicyAction(rawValue: String(rest[last.upperBound...]))
            else { return nil }
            return (String(body[..<marker.lowerBound]), action, .alsoRequires(requirement))
        }
        return nil
    }

    /// A minimum's words after its opening quote: `M" for ACTION: met`, `M" for ACTION; "I" is
    /// weaker` (or `the item is weaker`), `M" for ACTION, of items written`.
    private static func minimum(_ rest: Substring) -> (PolicyAction, Effect)? {
        guard let quote = rest.firstRange(of: "\" for ") else { return nil }
        let minimum = String(rest[..<quote.lowerBound])
        let tail = rest[quote.upperBound...]
        guard let action = PolicyAction.allCases.first(where: { tail.hasPrefix($0.rawValue) }) else { return nil }
        let after = tail.dropFirst(action.rawValue.count)
        if after == ": met" { return (action, .minimumMet(minimum)) }
        if after == ", of items written" { return (action, .minimumForItemsWritten(minimum)) }
        if after == "; the item is weaker" { return (action, .minimumNotMet(minimum, item: nil)) }
        if after.hasPrefix("; \""), after.hasSuffix("\" is weaker"), after.count >= 14 {
            return (action, .minimumNotMet(minimum, item: String(after.dropFirst(3).dropLast(11))))
        }
        return nil
    }
}
