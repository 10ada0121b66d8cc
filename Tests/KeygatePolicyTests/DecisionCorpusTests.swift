import KeygatePolicy
import KeygateTesting
import Testing

/// The decision corpus (Policies/conformance), run against the library.
@Suite struct DecisionCorpusTests {
    static let cases: [DecisionCase] = (try? DecisionCorpus.load()) ?? []

    @Test func corpusLoadsAndCoversEverySection() throws {
        let cases = try DecisionCorpus.load()
        #expect(cases.count >= 70)
        for section in ["§1.2", "§1.3", "§1.5", "§2", "§3", "§4.3", "§4.4", "§4.5", "§5", "§6.1", "§7.4", "§7.5"] {
            #expect(cases.contains { $0.spec.contains(section) }, "no case cites \(section)")
        }
    }

    @Test(arguments: cases)
    func libraryMatchesCorpus(_ decisionCase: DecisionCase) throws {
        let observed = try ObservedOutcome.library(decisionCase)
        let problems = decisionCase.mismatches(observed)
        #expect(problems.isEmpty, "\(decisionCase): \(problems.joined(separator: "; "))")
    }

    @Test func mismatchesAreReported() throws {
        let decisionCase = try #require(Self.cases.first { $0.id == "class-ak-locked-read" })
        let wrong = ObservedOutcome.decision(kind: "allow", status: nil, requirement: nil, reasonCodes: [])
        let problems = decisionCase.mismatches(wrong)
        #expect(problems.contains("expected decision 'deny', got 'allow'"))
        #expect(problems.contains { $0.contains("expected reason 'classUnavailable'") })
    }
}
