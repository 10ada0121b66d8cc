/// Finds the rules that may match a request without looking at every rule.
///
/// Each rule is filed under its service selector (else its access-group selector): exact
/// patterns in a dictionary, patterns with a literal prefix before the first wildcard under
/// that prefix. A lookup tries the exact value and each indexed prefix length of it, plus
/// the rules filed under neither. Deciding against 100,000 rules therefore costs about what
/// it costs against 10, when their selectors are specific.
struct RuleIndex: Sendable {
    private var exact: [PolicySelector.Field: [String: [Int]]] = [:]
    private var prefixes: [PolicySelector.Field: [String: [Int]]] = [:]
    private var prefixLengths: [PolicySelector.Field: [Int]] = [:]
    private var unindexed: [Int] = []

    init(_ rules: [CompiledRule]) {
        for (position, rule) in rules.enumerated() {
            guard let selector = Self.key(of: rule) else {
                unindexed.append(position)
                continue
            }
            for glob in selector.globs {
                if glob.isExact {
                    exact[selector.field, default: [:]][glob.pattern, default: []].append(position)
                } else {
                    prefixes[selector.field, default: [:]][glob.literalPrefix, default: []].append(position)
                }
            }
        }
        for (field, table) in prefixes { prefixLengths[field] = Set(table.keys.map(\.utf8.count)).sorted() }
    }

    /// The selector a rule is filed under: service, else access group, when every pattern
    /// is exact or has a non-empty literal prefix.
    private static func key(of rule: CompiledRule) -> CompiledRule.Selector? {
        for field in [PolicySelector.Field.service, .accessGroup] {
            if let selector = rule.selectors.first(where: { $0.field == field }),
                selector.globs.allSatisfy({ $0.isExact || !$0.literalPrefix.isEmpty })
            {
                return selector
            }
        }
        return nil
    }

    /// Positions of the rules that may match `request`, ascending, without duplicates.
    func candidates(for request: PolicyRequest) -> [Int] {
        var found = unindexed
        for field in [PolicySelector.Field.service, .accessGroup] {
            guard let value = request.value(of: field) else { continue }
            if let hits = exact[field]?[value] { found += hits }
            if let table = prefixes[field], let lengths = prefixLengths[field] {
                let bytes = Array(value.utf8)
                for length in lengths where length <= bytes.count {
                    if let hits = table[String(decoding: bytes[..<length], as: UTF8.self)] { found += hits }
                }
            }
        }
        found.sort()
        var unique: [Int] = []
        unique.reserveCapacity(found.count)
        for position in found where unique.last != position { unique.append(position) }
        return unique
    }
}

/// A rule with its patterns compiled and its minimums reduced to situation sets.
struct CompiledRule: Sendable {
    struct Selector: Sendable {
        let field: PolicySelector.Field
        let globs: [Glob]
    }

    let rule: PolicyRule
    let selectors: [Selector]
    /// Per clause: the allowed situations of a `require at-least` minimum.
    let minimums: [StrengthAnalysis.SituationSet?]

    init(_ rule: PolicyRule) {
        self.rule = rule
        self.selectors = rule.selectors.map { Selector(field: $0.field, globs: $0.patterns.map(Glob.init)) }
        self.minimums = rule.clauses.map { clause in
            guard let minimum = try? StrengthAnalysis.minimum(of: clause.effect) else { return nil }
            return StrengthAnalysis.allowedSituations(minimum)
        }
    }

    func matches(_ request: PolicyRequest) -> Bool {
        for selector in selectors {
            let value = request.value(of: selector.field)
            guard selector.globs.contains(where: { glob in value.map(glob.matches) ?? (glob.pattern == "*") }) else {
                return false
            }
        }
        return true
    }
}
