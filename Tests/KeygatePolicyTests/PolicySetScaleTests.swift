import KeygatePolicy
import Testing

/// Large rule sets: 10,000 rules load and decide exactly as a linear scan would, and the
/// index keeps the candidates few.
@Suite struct PolicySetScaleTests {
    /// Rule `i`: exact service `svc-i` for even i, prefix glob `com.example.svc-i.*` for odd i;
    /// every rule bounds reads to `i % 300` seconds; every 7th forbids export; every 100th has
    /// no service selector (a group selector with a wildcard, unindexed).
    static func text(rules count: Int) -> String {
        var text = "# generated\n"
        for index in 0..<count {
            let selector =
                index % 100 == 99
                ? "match access-group \"*-\(index)\""
                : index % 2 == 0 ? "match service \"svc-\(index)\"" : "match service \"com.example.svc-\(index).*\""
            text += "rule \"r\(index)\" {\n  \(selector)\n  on read require fresh \(index % 300)s\n"
            if index % 7 == 0 { text += "  forbid export\n" }
            text += "}\n"
        }
        return text
    }

    static let set: PolicySet = try! PolicySet(files: [("big.policy", text(rules: 10_000))])

    @Test func tenThousandRulesLoad() {
        #expect(Self.set.ruleCount == 10_000)
        #expect(Self.set.document.rules[9_999].location?.line == 2 + 4 * 9_999 + (9_998 / 7 + 1))
    }

    /// The indexed decision equals a brute-force one computed from the document alone.
    @Test(arguments: [0, 1, 14, 99, 2_001, 4_999, 9_998, 9_999])
    func decidesLikeALinearScan(index: Int) {
        let services = ["svc-\(index)", "com.example.svc-\(index).token", "nothing-\(index)"]
        for service in services {
            for action in [PolicyAction.read, .export] {
                let group = "group-\(index)"
                let request = PolicyRequest(action: action, service: service, account: "me", accessGroup: group)
                let decision = Self.set.decide(request)
                let expected = Self.set.document.rules.filter { rule in
                    rule.selectors.allSatisfy { selector in
                        let value = selector.field == .service ? service : group
                        return selector.patterns.contains { pattern in
                            pattern.hasSuffix("*")
                                ? value.hasPrefix(pattern.dropFirst(pattern.hasPrefix("*") ? 1 : 0).dropLast())
                                    || (pattern.hasPrefix("*") && value.hasSuffix(pattern.dropFirst()))
                                : pattern.hasPrefix("*") ? value.hasSuffix(pattern.dropFirst()) : value == pattern
                        }
                    }
                }.map(\.name)
                #expect(decision.matchedRules == expected, "\(service) \(action)")
                if action == .export {
                    #expect(decision.isDenied == expected.contains { Int($0.dropFirst())! % 7 == 0 })
                } else if let first = expected.first {
                    #expect(decision.freshWithin == expected.map { Int($0.dropFirst())! % 300 }.min())
                    #expect(decision.decidingRules.contains(first))
                } else {
                    #expect(decision.freshWithin == nil && decision.decidingRules.isEmpty)
                }
            }
        }
    }

    @Test func globs() {
        let set = try! PolicySet(files: [
            ("g.policy", #"rule "a" { match service "a?c*", "x" match label "*" forbid read }"#)
        ])
        func denied(_ service: String, label: String? = "l") -> Bool {
            set.decide(PolicyRequest(action: .read, service: service, account: "", accessGroup: "", label: label))
                .isDenied
        }
        #expect(denied("abc") && denied("azc.more") && denied("x"))
        #expect(!denied("ac") && !denied("xx") && !denied("abd"))
        #expect(denied("abc", label: nil), "an item without a label matches only *")
    }
}
