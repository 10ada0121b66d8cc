import Keygate
import KeygateAudit
import KeygatePolicy
import KeygateTesting
import Synchronization
import Testing

/// The facade asks the organisation's rules once per item and operation (issue 28 point 3): the
/// refusal before the item's own access control is evaluated and the conditions after it come
/// from one decision, for an add, a read, a list, an update (twice more when it moves the item)
/// and a delete.
@Suite struct RulesDecidedOnceTests {
    /// A policy that adds a freshness bound to every action (so every review has something to
    /// act on) and counts the questions it is asked.
    final class CountingPolicy: OrganisationPolicy {
        let asked = Mutex<[String]>([])

        func review(_ action: PolicyAction, item fields: ItemFields) -> PolicyDecision {
            asked.withLock { $0.append("\(action) \(fields.identity.service)") }
            return PolicyDecision(reasons: [
                PolicyReason(ruleID: "bounded", action: action, effect: .freshWithin(seconds: 300))
            ])
        }

        func take() -> [String] {
            asked.withLock { asked in
                defer { asked = [] }
                return asked
            }
        }
    }

    @Test(arguments: Backend.allCases)
    func eachItemIsDecidedOncePerOperation(_ backend: Backend) async throws {
        let policy = CountingPolicy()
        let fixture = try KeychainFixture(backend, policy: policy)
        try await KeychainTests.add(fixture, service: "api")
        #expect(policy.take() == ["add api"])
        _ = try await fixture.keychain.copyMatching(KeychainTests.read("api"))
        #expect(policy.take() == ["read api"])
        _ = try await fixture.keychain.copyMatching(ItemQuery(service: "api", returnAttributes: true))
        #expect(policy.take() == ["list api"])
        try await fixture.keychain.update(ItemQuery(service: "api"), changes: ItemChanges(label: "relabelled"))
        #expect(policy.take() == ["update api"])
        // A move is also, to the rules, the item it becomes: one decision each, update and add there.
        try await fixture.keychain.update(ItemQuery(service: "api"), changes: ItemChanges(service: "moved"))
        #expect(policy.take() == ["update api", "update moved", "add moved"])
        try await fixture.keychain.delete(ItemQuery(service: "moved"))
        #expect(policy.take() == ["delete moved"])
    }

    /// The decision's typed reasons reach the audit record as notes, one per rule, each
    /// reading back as the same value.
    @Test func theRecordCarriesTheRulesReasons() async throws {
        let policy = CountingPolicy()
        let fixture = try KeychainFixture(.sqlite, policy: policy)
        let audit = AuditRecorder()
        let keychain = Keychain(
            store: fixture.store, accessGroups: ["group.app"], authenticator: fixture.authenticator,
            device: fixture.device, organisationPolicy: policy, clock: fixture.clock, auditor: Auditor(sink: audit))
        try await keychain.add(AddRequest(service: "api", account: "me", data: SecretData("v")))
        let expected = PolicyReason(ruleID: "bounded", action: .add, effect: .freshWithin(seconds: 300))
        let notes = audit.records.flatMap { [$0.event] + $0.event.more }.flatMap(\.notes)
        #expect(notes.contains(.organisationRule(expected)), "\(notes)")
        #expect(
            AuditNote(text: AuditNote.organisationRule(expected).description, kind: .add) == .organisationRule(expected)
        )
    }
}
