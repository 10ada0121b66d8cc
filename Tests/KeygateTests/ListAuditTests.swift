import Keygate
import KeygatePolicy
import KeygateStore
import KeygateTesting
import Testing

/// Issue 10 point 2: a list (attributes only, every match) of many items returns every item in
/// the order they were added and audits each one, in that order, in a few records that each
/// stay within the line limit: the record names them all. A value read afterwards still opens.
@Suite struct ListAuditTests {
    @Test(arguments: Backend.allCases)
    func aListOfManyItemsNamesEachInItsRecords(_ backend: Backend) async throws {
        let fixture = try KeychainFixture(backend)
        let passcode = try AccessControl(protection: .whenUnlocked, flags: [.devicePasscode])
        let long = String(repeating: "n", count: 400)
        let count = 300
        var items: [NewItem] = []
        for index in 0..<count {
            let control = index % 4 == 0 ? passcode : try AccessControl(protection: .afterFirstUnlock)
            items.append(
                NewItem(
                    fields: ItemFields(
                        identity: ItemIdentity(
                            accessGroup: "group.app", account: "\(long)-\(index)", service: "svc-\(index % 9)"),
                        accessControl: control, created: fixture.clock.now(), modified: fixture.clock.now()),
                    data: SecretData("value-\(index)")))
        }
        try fixture.store.insert(items)
        let (keychain, audit) = fixture.audited(groups: ["group.app"])
        var query = ItemQuery(synchronizable: .any, returnAttributes: true)
        query.matchLimit = .all
        let found = try await keychain.copyMatching(query)
        #expect(found.count == count)
        #expect(found.allSatisfy { $0.data == nil })
        #expect(found.compactMap(\.attributes).map(\.identity) == items.map(\.fields.identity))
        #expect(found.compactMap(\.attributes).map(\.accessControl) == items.map(\.fields.accessControl))

        let records = audit.records
        #expect(records.count > 1 && records.count < count, "\(records.count) records")
        #expect(records.allSatisfy { $0.line.utf8.count <= AuditRecord.maximumLineLength })
        let decisions = records.flatMap(\.event.decisions)
        #expect(decisions.map(\.item) == items.map { Optional($0.fields.identity) })
        #expect(decisions.map(\.accessControl) == items.map { Optional($0.fields.accessControl) })
        #expect(decisions.allSatisfy { $0.kind == .read && $0.decision == .allow })
        #expect(decisions.allSatisfy { $0.notes.map(\.description) == [AuditNote.attributesOnly.description] })
        // Each record's line reads back into the decisions it was written with.
        for record in records {
            let parsed = try AuditRecord(line: record.line, file: "trail", lineNumber: 1)
            #expect(parsed.event.decisions.map(\.item) == record.event.decisions.map(\.item))
        }

        // A read of a value after the list (the store's other search) still opens it.
        let value = try await keychain.copyMatching(
            ItemQuery(service: "svc-1", account: "\(long)-1", returnData: true))
        #expect(value.first?.data.map { $0.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } } == "value-1")
    }
}
