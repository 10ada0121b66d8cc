import Foundation
import KeygatePolicy
import KeygateTesting
import Testing

/// Generated documents survive AST → text → AST and AST → JSON → AST.
@Suite struct PolicyRoundTripTests {
    static let minimums: [PolicyEffect] =
        StrengthAnalysis.addable.prefix(400).map { entry in
            .atLeast(protection: entry.control.protection, flags: entry.control.flags)
        } + [.atLeast(protection: nil, flags: [.biometryAny, .or, .devicePasscode])]

    static func document(seed: UInt64) -> PolicyDocument {
        var g = SeededRandom(seed: seed)
        var document = PolicyDocument()
        let words = ["com.example.*", "bank \"quoted\" \\ back", "*", "a?c", "/usr/bin/app", "recovery", "é-ü"]
        for index in 0..<(1 + g.below(6)) {
            var rule = PolicyRule(name: "rule-\(index) \(g.pick(words))")
            for _ in 0..<g.below(4) {
                rule.selectors.append(
                    PolicySelector(
                        field: g.pick(PolicySelector.Field.allCases),
                        patterns: (0...g.below(3)).map { _ in g.pick(words) }))
            }
            for _ in 0..<g.below(4) {
                var actions: [PolicyAction] = []
                for action in PolicyAction.allCases where g.below(3) == 0 { actions.append(action) }
                if actions.isEmpty { actions = [g.pick(PolicyAction.allCases)] }
                let effect: PolicyEffect =
                    switch g.below(4) {
                    case 0: .forbid
                    case 1: .fresh(seconds: g.below(301))
                    case 2: .factors(Requirement([FactorSet(rawValue: UInt8(1 + g.below(7))), .passcode]))
                    default: g.pick(minimums)
                    }
                rule.clauses.append(PolicyClause(actions: actions, effect: effect))
            }
            document.rules.append(rule)
        }
        for _ in 0..<g.below(3) {
            document.grants.append(PolicyGrant(accessGroup: g.pick(words), programs: [g.pick(words), "/opt/*"]))
        }
        return document
    }

    @Test(arguments: 0..<200)
    func textAndJSONRoundTrip(seed: Int) throws {
        let document = Self.document(seed: UInt64(seed))
        let text = PolicyPrinter.text(document)
        let parsed = try PolicyParser.parse(text, file: "generated")
        #expect(parsed.strippingLocations() == document, "\(text)")
        let json = try JSONEncoder().encode(parsed)
        #expect(try JSONDecoder().decode(PolicyDocument.self, from: json) == parsed)
    }
}

/// Damaged files (a crash half-way, another writer) never crash the parser: each either
/// parses or fails with a position inside the file.
@Suite struct PolicyParserRobustnessTests {
    @Test(arguments: 0..<300)
    func mutatedTextParsesOrFailsAtAPosition(seed: Int) {
        var g = SeededRandom(seed: UInt64(seed) &* 7919)
        var scalars = Array(PolicyParserTests.example.unicodeScalars)
        for _ in 0...g.below(4) {
            let at = g.below(scalars.count)
            switch g.below(3) {
            case 0: scalars.remove(at: at)
            case 1: scalars.insert(g.pick(["\"", "{", "}", ",", "+", "#", "\n", "é", "\u{0}", "x"]), at: at)
            default: scalars = Array(scalars[..<at])  // cut off, as by a crash half-way
            }
            if scalars.isEmpty { break }
        }
        var text = ""
        text.unicodeScalars.append(contentsOf: scalars)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        do {
            _ = try PolicySet(files: [("m.policy", text)])
        } catch {
            #expect(error.location.file == "m.policy")
            #expect(error.location.line >= 1 && error.location.line <= lines.count, "\(error)")
            #expect(error.location.column >= 1, "\(error)")
        }
    }
}
