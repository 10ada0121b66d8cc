import Keygate
import KeygatePolicy
import KeygateStore
import KeygateTesting
import Testing

/// Issue 10 point 1: a call that decides N items writes one record naming them, each with its
/// own decision, and the record reads back into the same events.
@Suite struct AuditRecordPerCallTests {
    @Test(arguments: Backend.allCases)
    func aReadOfThreeItemsWritesOneRecordNamingThem(_ backend: Backend) async throws {
        let fixture = try KeychainFixture(backend)
        for account in ["a", "b", "c"] { try await KeychainTests.add(fixture, account: account) }
        let (keychain, audit) = fixture.audited(groups: ["group.app"])
        let found = try await keychain.copyMatching(
            ItemQuery(service: "api", matchLimit: .all, returnData: true))
        #expect(found.count == 3)
        #expect(audit.records.count == 1, "one record for the call: \(audit.records.map(\.line))")
        let record = try #require(audit.records.first)
        #expect(record.event.decisions.map { $0.item?.account ?? "" }.sorted() == ["a", "b", "c"])
        #expect(record.event.decisions.allSatisfy { $0.kind == .read && $0.decision == .allow })
        // The line parses back into the same events.
        let parsed = try AuditRecord(line: record.line, file: "trail", lineNumber: 1)
        #expect(parsed.event.decisions.map(\.item) == record.event.decisions.map(\.item))
        #expect(parsed.hash == record.hash)
        // Each item is still found on its own.
        audit.expectLastDecision(.read, service: "api", account: "b", is: .allow)
    }

    @Test(arguments: Backend.allCases)
    func aDeleteOfTwoItemsWritesOneRecord(_ backend: Backend) async throws {
        let fixture = try KeychainFixture(backend)
        for account in ["a", "b"] { try await KeychainTests.add(fixture, account: account) }
        let (keychain, audit) = fixture.audited(groups: ["group.app"])
        try await keychain.delete(ItemQuery(service: "api"))
        #expect(audit.records.count == 1)
        #expect(audit.records.first?.event.decisions.count == 2)
    }
}

extension AuditRecordPerCallTests {
    /// A call that decides more items than one line may name writes several records, each
    /// within the limit, rather than failing (and denying) for a line too long to write.
    @Test func aReadOfManyItemsStaysWithinTheLineLimit() async throws {
        let fixture = try KeychainFixture(.inMemory)
        let long = String(repeating: "n", count: 400)
        for index in 0..<300 { try await KeychainTests.add(fixture, account: "\(long)-\(index)") }
        let (keychain, audit) = fixture.audited(groups: ["group.app"])
        let found = try await keychain.copyMatching(ItemQuery(service: "api", matchLimit: .all, returnData: true))
        #expect(found.count == 300)
        #expect(audit.records.count > 1 && audit.records.count < 300)
        #expect(audit.records.allSatisfy { $0.line.utf8.count <= AuditRecord.maximumLineLength })
        #expect(audit.records.map(\.event.decisions.count).reduce(0, +) == 300)
    }
}

/// A sink that cannot write anything (a full disk).
private struct FailingSink: AuditSink {
    func append(_ event: AuditEvent, at time: Timestamp) throws(KeygateError) -> AuditRecord {
        throw KeygateError(.io, "the disk is full")
    }
}

extension AuditRecordPerCallTests {
    /// The decisions a call collects are written before the store changes: when their record
    /// cannot be written, nothing is deleted or replaced (fail closed).
    @Test(arguments: Backend.allCases)
    func nothingChangesWhenTheCallsRecordCannotBeWritten(_ backend: Backend) async throws {
        let fixture = try KeychainFixture(backend)
        for account in ["a", "b"] { try await KeychainTests.add(fixture, account: account, value: "old") }
        let audited = Keychain(
            store: fixture.store, accessGroups: ["group.app"], authenticator: fixture.authenticator,
            device: fixture.device, clock: fixture.clock, auditor: Auditor(sink: FailingSink(), isRequired: true))
        #expect(await KeychainTests.status { try await audited.delete(ItemQuery(service: "api")) } == .io)
        #expect(
            await KeychainTests.status {
                try await audited.update(ItemQuery(service: "api"), changes: ItemChanges(data: SecretData("new")))
            } == .io)
        let left = try await fixture.keychain.copyMatching(
            ItemQuery(service: "api", matchLimit: .all, returnData: true))
        #expect(left.map { text($0.data) } == ["old", "old"])
    }
}
