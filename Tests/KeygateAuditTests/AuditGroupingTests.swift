import KeygatePolicy
import Testing

@testable import KeygateAudit

/// Issue 10 point 2: a collecting call groups its decisions into records as they come (a list
/// names hundreds of thousands). The records hold every decision once, in the order they were
/// made; a record holds decisions of one kind and stays within a quarter of the line limit by
/// the estimate; a call of one decision writes one record naming only it.
@Suite struct AuditGroupingTests {
    private static func event(_ kind: AuditEvent.Kind, _ index: Int) -> AuditEvent {
        AuditEvent(
            kind: kind,
            item: ItemIdentity(
                accessGroup: "g", account: String(repeating: "a", count: 500) + "\(index)", service: "s"),
            accessControl: TestControls.plain, decision: .allow, notes: [.attributesOnly])
    }

    @Test func recordsKeepEveryDecisionInOrderAndOfOneKind() async throws {
        let sink = InMemoryAuditSink()
        let auditor = Auditor(sink: sink, isRequired: true)
        let made: [AuditEvent] =
            (0..<150).map { Self.event(.read, $0) } + (150..<153).map { Self.event(.delete, $0) }
            + (153..<158).map { Self.event(.read, $0) } + [Self.event(.update, 158)]
        try await auditor.collecting { (auditor) async throws(KeygateError) in
            for event in made { try auditor.record(event) }
        }
        let records = sink.records
        let decisions = records.flatMap(\.event.decisions)
        #expect(decisions.map(\.item) == made.map(\.item))
        #expect(decisions.map(\.kind) == made.map(\.kind))
        for record in records {
            let kinds = Set(record.event.decisions.map(\.kind))
            #expect(kinds.count == 1, "one kind a record: \(kinds)")
            let estimate = record.event.decisions.reduce(0) { $0 + $1.estimatedLength }
            #expect(estimate <= AuditRecord.maximumLineLength / 4)
            #expect(record.line.utf8.count <= AuditRecord.maximumLineLength)
        }
        // The reads before the deletes need several records; then one for the deletes, one for
        // the five reads after them and one for the update.
        #expect(records.count > 4)
        #expect(records.suffix(3).map(\.event.decisions.count) == [3, 5, 1])
        #expect(records.dropLast(3).allSatisfy { $0.event.kind == .read })
    }

    @Test func aCallOfOneDecisionWritesOneRecordOfIt() async throws {
        let sink = InMemoryAuditSink()
        let auditor = Auditor(sink: sink, isRequired: true)
        try await auditor.collecting { (auditor) async throws(KeygateError) in
            try auditor.record(Self.event(.read, 1))
        }
        #expect(sink.records.count == 1)
        #expect(sink.records.first?.event.more.isEmpty == true)
        #expect(sink.records.first?.event.item == Self.event(.read, 1).item)
    }
}
