import Foundation
import Keygate
import KeygatePolicy
import KeygateTesting
import Testing

/// Loading a directory: every .policy and .policy.json file in a stable order, all or nothing.
@Suite struct PolicyDirectoryTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keygate-policies-\(UUID())").path

    func write(_ name: String, _ text: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try text.write(toFile: directory + "/" + name, atomically: true, encoding: .utf8)
    }

    @Test func loadsTextAndJSONInNameOrder() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try write("b.policy", "rule \"from-b\" { forbid export }")
        try write(
            "a.policy.json",
            #"{"rules": [{"name": "from-a", "selectors": [], "clauses": [{"actions": ["read"], "effect": {"kind": "fresh", "seconds": 5}}]}], "grants": []}"#
        )
        try write("c.policy", "rule \"from-c\" { forbid import }")
        try write("notes.txt", "not a policy")
        try write(".hidden.policy", "broken")
        let set = try PolicyDirectory.load([directory])
        #expect(set.document.rules.map(\.name) == ["from-a", "from-b", "from-c"])
        #expect(set.decide(PolicyRequest(action: .read, service: "s", account: "a", accessGroup: "g")).freshWithin == 5)
    }

    @Test func oneBadFileFailsTheWholeLoad() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try write("a.policy", "rule \"ok\" { forbid export }")
        try write(
            "b.policy.json",
            #"{"rules": [{"name": "x", "selectors": [], "clauses": [{"actions": ["read"], "effect": {"kind": "fresh", "seconds": 900}}]}], "grants": []}"#
        )
        do {
            _ = try PolicyDirectory.load([directory])
            Issue.record("a freshness bound over 300 s was accepted")
        } catch {
            #expect(error.status == .param)
            #expect(
                error.message
                    == "\(directory)/b.policy.json: rule 'x': freshness bound 900s is over 300s, the longest reuse window"
            )
        }
        try write("b.policy.json", "{")
        #expect(throws: KeygateError.self) { try PolicyDirectory.load([directory]) }
        #expect(try PolicyDirectory.load([directory + "/missing"]).ruleCount == 0)
    }

    /// Each path is looked at once: a missing one adds nothing, a file is read as one policy
    /// file, a directory's files are read in name order.
    @Test func missingPathsAddNothingAndFilesAreReadAsThemselves() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try write("a.policy", "rule \"from-a\" { forbid export }")
        try write("single.txt", "rule \"from-file\" { forbid import }")
        let set = try PolicyDirectory.load([directory + "/missing", directory + "/single.txt", directory])
        #expect(set.document.rules.map(\.name) == ["from-file", "from-a"])
    }

    @Test func reloadSwapsTheWholeSetOrKeepsTheOldAndAuditsIt() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try write("a.policy", "rule \"one\" { forbid export }")
        let audit = AuditRecorder()
        let store = PolicyStore()
        try store.reload(from: [directory], auditor: Auditor(sink: audit))
        #expect(store.policies.document.rules.map(\.name) == ["one"])
        try write("b.policy", "rule \"two\" { forbid export }\nrule \"three\" { on read require fresh 1h }")
        #expect(throws: KeygateError.self) { try store.reload(from: [directory], auditor: Auditor(sink: audit)) }
        #expect(store.policies.document.rules.map(\.name) == ["one"], "never a half-loaded set")
        #expect(audit.records.map(\.event.kind) == [.policyReload, .policyReload])
        #expect(audit.records.map(\.event.decision) == [.allow, .deny])
        guard case .policyKept(rules: 1, let message)? = audit.records[1].event.notes.first else {
            Issue.record("the failed reload must say it kept the one rule: \(audit.records[1].event.notes)")
            return
        }
        #expect(message.contains("b.policy:2:38: expected a duration such as 30s or 2m, found '1h'"))
    }
}
