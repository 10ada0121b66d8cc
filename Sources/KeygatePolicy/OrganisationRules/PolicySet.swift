/// A loaded, validated set of organisation rules and grants, indexed for deciding.
///
/// ```swift
/// let set = try PolicySet(files: [("bank.policy", text)])
/// let decision = set.decide(PolicyRequest(action: .read, service: "com.example.bank.token",
///                                         account: "me", accessGroup: "bank"))
/// ```
/// Files are combined in the order given (`PolicyLoader` sorts a directory by name), rule
/// names must be unique across all of them, and the set is immutable: a reload builds a new
/// one (see ``PolicyStore``).
public struct PolicySet: Sendable {
    /// The combined document.
    public let document: PolicyDocument
    private let compiled: [CompiledRule]
    private let index: RuleIndex
    private let grants: [String: [PolicyGrant]]

    /// The empty set: no rules, no grants.
    public static let empty = PolicySet(validated: PolicyDocument())

    /// Parses and combines `files` (name and text, in this order).
    /// - Throws: ``PolicyParseError`` for the first problem in any file, or a duplicate rule name.
    public init(files: [(name: String, text: String)]) throws(PolicyParseError) {
        var combined = PolicyDocument()
        for file in files {
            let document = try PolicyParser.parse(file.text, file: file.name)
            combined.rules += document.rules
            combined.grants += document.grants
        }
        try self.init(document: combined)
    }

    /// Validates a document (from text or JSON) and indexes it.
    /// - Throws: ``PolicyParseError`` for the first error ``PolicyValidator`` finds.
    public init(document: PolicyDocument) throws(PolicyParseError) {
        let result = PolicyValidator.validate(document)
        if let first = result.errors.first { throw first }
        self.init(validated: document)
    }

    private init(validated document: PolicyDocument) {
        self.document = document
        self.compiled = document.rules.map(CompiledRule.init)
        self.index = RuleIndex(compiled)
        self.grants = Dictionary(grouping: document.grants, by: \.accessGroup)
    }

    /// How many rules the set holds.
    public var ruleCount: Int { document.rules.count }

    /// Decides `request`: see ``PolicyDecision`` for the combination.
    public func decide(_ request: PolicyRequest) -> PolicyDecision {
        var decision = PolicyDecision()
        var forbidding: [PolicyReason] = []
        var violations: [PolicyReason] = []
        var effective: [String] = []
        var notes: [PolicyReason] = []
        // Worked out only when a matching rule sets a minimum (most requests meet none).
        var situations: StrengthAnalysis.SituationSet??
        func itemSituations() -> StrengthAnalysis.SituationSet? {
            if let situations { return situations }
            let computed = request.accessControl.map(StrengthAnalysis.allowedSituations)
            situations = .some(computed)
            return computed
        }
        for position in index.candidates(for: request) {
            let compiled = self.compiled[position]
            guard compiled.matches(request) else { continue }
            let rule = compiled.rule
            decision.matchedRules.append(rule.name)
            func reason(_ effect: PolicyReason.Effect) -> PolicyReason {
                PolicyReason(ruleID: rule.name, action: request.action, effect: effect)
            }
            for (clauseIndex, clause) in rule.clauses.enumerated() where clause.actions.contains(request.action) {
                if effective.last != rule.name { effective.append(rule.name) }
                switch clause.effect {
                case .forbid:
                    if forbidding.last?.ruleID != rule.name { forbidding.append(reason(.forbids)) }
                case .atLeast:
                    let text = PolicyPrinter.minimumText(clause.effect)
                    if let minimum = compiled.minimums[clauseIndex], let itemSituations = itemSituations() {
                        if itemSituations.isSubset(of: minimum) {
                            notes.append(reason(.minimumMet(text)))
                        } else {
                            let item = request.accessControl.map { PolicyPrinter.minimumText(of: $0) }
                            violations.append(reason(.minimumNotMet(text, item: item)))
                        }
                    } else {
                        notes.append(reason(.minimumForItemsWritten(text)))
                    }
                case .fresh(let seconds):
                    if decision.freshWithin.map({ seconds < $0 }) ?? true {
                        decision.freshWithin = seconds
                        decision.freshRules = [rule.name]
                    } else if decision.freshWithin == seconds {
                        decision.freshRules.append(rule.name)
                    }
                    notes.append(reason(.freshWithin(seconds: seconds)))
                case .factors(let requirement):
                    decision.requirements.append(.init(rule: rule.name, requirement: requirement))
                    notes.append(reason(.alsoRequires(requirement)))
                }
            }
        }
        if !forbidding.isEmpty {
            decision.outcome = .deny(.deniedByPolicy)
            decision.decidingRules = forbidding.map(\.ruleID)
            decision.reasons = forbidding
        } else if !violations.isEmpty {
            decision.outcome = .deny(.deniedByPolicy)
            decision.decidingRules = Self.distinct(violations.map(\.ruleID))
            decision.reasons = violations
        } else {
            decision.decidingRules = effective
            decision.reasons = notes
        }
        return decision
    }

    /// `ids` with each run of one id kept once (a rule's reasons come together).
    private static func distinct(_ ids: [String]) -> [String] {
        var kept: [String] = []
        for id in ids where kept.last != id { kept.append(id) }
        return kept
    }

    /// Whether `program` may use `accessGroup`: yes when no grant names the group, else only
    /// when a grant of the group matches the program (an unknown program matches only `*`).
    public func entitlement(program: String?, accessGroup: String) -> EntitlementDecision {
        guard let named = grants[accessGroup], !named.isEmpty else {
            return .ungranted(accessGroup)
        }
        let matching = named.filter { grant in
            grant.programs.contains { pattern in program.map { Glob(pattern).matches($0) } ?? (pattern == "*") }
        }
        if !matching.isEmpty {
            return EntitlementDecision(
                isAllowed: true, ruleIDs: matching.map(\.id),
                explanation: "\(matching[0].id) grants '\(accessGroup)' to \(program ?? "any program")")
        }
        return EntitlementDecision(
            isAllowed: false, ruleIDs: named.map(\.id),
            explanation:
                "access group '\(accessGroup)' is granted only to "
                + named.flatMap(\.programs).joined(separator: ", ") + " (\(named.map(\.id).joined(separator: ", ")))"
                + "; \(program ?? "an unknown program") is not one of them")
    }
}
