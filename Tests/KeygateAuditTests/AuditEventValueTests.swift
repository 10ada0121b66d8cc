import KeygateAudit
import KeygatePolicy
import Testing

/// Session 22: an event keeps its fields in one shared storage until a copy changes. It must
/// still behave as a value: a changed copy leaves the original as it was, and equality and
/// hashing look at the fields, not at which storage holds them.
@Suite struct AuditEventValueTests {
    static let item = ItemIdentity(accessGroup: "g", account: "me", service: "api")

    @Test func aChangedCopyLeavesTheOriginalAsItWas() {
        let original = AuditEvent(kind: .read, item: Self.item, decision: .allow, notes: [.attributesOnly])
        var copy = original
        copy.item?.account = "someone else"
        copy.notes.append(.invalidated)
        copy.processID = 42
        copy.more.append(AuditEvent(kind: .read, item: Self.item, decision: .deny))
        #expect(original.item?.account == "me" && original.notes == [.attributesOnly])
        #expect(original.processID == 0 && original.more.isEmpty)
        #expect(copy.item?.account == "someone else" && copy.notes == [.attributesOnly, .invalidated])
        #expect(copy.processID == 42 && copy.more.count == 1)
        #expect(copy != original)
    }

    @Test func eventsWithTheSameFieldsAreEqualAndHashAlike() {
        let first = AuditEvent(kind: .delete, item: Self.item, accessControl: TestControls.plain, decision: .allow)
        var second = AuditEvent(kind: .delete, item: Self.item, accessControl: TestControls.plain, decision: .deny)
        #expect(first != second)
        second.decision = .allow
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        #expect(Set([first, second]).count == 1)
    }
}
