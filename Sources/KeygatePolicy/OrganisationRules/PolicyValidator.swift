/// Checks a policy document: errors make it unusable, warnings (lint) do not.
///
/// The parser already refuses most errors at their position; the validator repeats those
/// checks for documents given as JSON and adds the ones that need the whole set: duplicate
/// rule names. The lint warns when a rule asks for less than another rule on the same items.
public enum PolicyValidator {
    /// Errors and warnings, each at a location.
    public struct Result: Sendable {
        /// Problems that make the document unusable.
        public var errors: [PolicyParseError] = []
        /// Advice: the document still works.
        public var warnings: [PolicyParseError] = []
    }

    /// Validates and lints `document`.
    public static func validate(_ document: PolicyDocument) -> Result {
        var result = Result()
        var seen: [String: SourceLocation?] = [:]
        for rule in document.rules {
            let at = rule.location ?? SourceLocation(file: "(json)", line: 0, column: 0)
            if let first = seen[rule.name] {
                result.errors.append(
                    PolicyParseError(
                        at,
                        "duplicate rule name '\(rule.name)'" + (first.map { ", first defined at \($0)" } ?? "")))
            } else {
                seen[rule.name] = rule.location
            }
            if rule.name.isEmpty { result.errors.append(PolicyParseError(at, "a rule name cannot be empty")) }
            for selector in rule.selectors where selector.patterns.isEmpty || selector.patterns.contains("") {
                result.errors.append(
                    PolicyParseError(at, "empty selector: rule '\(rule.name)' matches \(selector.field.rawValue) \"\""))
            }
            if rule.clauses.isEmpty {
                result.warnings.append(PolicyParseError(at, "rule '\(rule.name)' has no effect (no 'on' or 'forbid')"))
            }
            for clause in rule.clauses {
                let clauseAt = clause.location ?? at
                if clause.actions.isEmpty {
                    result.errors.append(PolicyParseError(clauseAt, "rule '\(rule.name)': a clause names no operation"))
                }
                switch clause.effect {
                case .fresh(let seconds) where seconds < 0 || seconds > PolicyParser.maximumFreshSeconds:
                    result.errors.append(
                        PolicyParseError(
                            clauseAt,
                            "rule '\(rule.name)': freshness bound \(seconds)s is over "
                                + "\(PolicyParser.maximumFreshSeconds)s, the longest reuse window"))
                case .atLeast:
                    if !StrengthAnalysis.isSatisfiable(clause.effect) {
                        result.errors.append(
                            PolicyParseError(
                                clauseAt,
                                "rule '\(rule.name)': no access control can satisfy require at-least \""
                                    + PolicyPrinter.minimumText(clause.effect) + "\""))
                    }
                case .factors(let requirement) where requirement.count == 0:
                    result.errors.append(PolicyParseError(clauseAt, "rule '\(rule.name)': requires no factor"))
                default:
                    break
                }
            }
        }
        for grant in document.grants
        where grant.accessGroup.isEmpty || grant.programs.isEmpty
            || grant.programs.contains("")
        {
            result.errors.append(
                PolicyParseError(
                    grant.location ?? SourceLocation(file: "(json)", line: 0, column: 0),
                    "empty selector in the grant of '\(grant.accessGroup)'"))
        }
        result.warnings += weakerMinimums(document)
        result.warnings += ProgramPathLint.interpreterWarnings(document)
        return result
    }

    /// Warns about a rule whose `require at-least` for an operation is strictly weaker than
    /// another rule's for the same operation, when the other rule applies to all of its items
    /// (its selectors are a subset of this rule's): the weaker minimum can never decide anything.
    static func weakerMinimums(_ document: PolicyDocument) -> [PolicyParseError] {
        struct Minimum {
            let rule: PolicyRule
            let action: PolicyAction
            let control: AccessControl
        }
        var minimums: [Minimum] = []
        for rule in document.rules {
            for clause in rule.clauses {
                guard case .atLeast = clause.effect, let control = try? StrengthAnalysis.minimum(of: clause.effect)
                else { continue }
                for action in clause.actions { minimums.append(Minimum(rule: rule, action: action, control: control)) }
            }
        }
        var warnings: [PolicyParseError] = []
        var warned: Set<String> = []
        for weaker in minimums {
            for stronger in minimums
            where stronger.rule.name != weaker.rule.name && stronger.action == weaker.action
                && Set(stronger.rule.selectors).isSubset(of: Set(weaker.rule.selectors))
                && StrengthAnalysis.isAtLeastAsStrong(stronger.control, as: weaker.control)
                && !StrengthAnalysis.isAtLeastAsStrong(weaker.control, as: stronger.control)
            {
                let key = "\(weaker.rule.name)/\(weaker.action)"
                guard warned.insert(key).inserted else { continue }
                warnings.append(
                    PolicyParseError(
                        weaker.rule.location ?? SourceLocation(file: "(json)", line: 0, column: 0),
                        "rule '\(weaker.rule.name)' asks for less on \(weaker.action) than rule "
                            + "'\(stronger.rule.name)', which applies to the same items: its minimum never decides"))
            }
        }
        return warnings
    }
}
