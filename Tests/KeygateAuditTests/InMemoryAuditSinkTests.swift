import KeygateAudit
import KeygatePolicy
import Testing

/// Issue 10 point 1: the in-memory sink keeps what each record was sealed from and seals the
/// records again when asked; they must be exactly the records its appends returned.
@Suite struct InMemoryAuditSinkTests {
    static func event(_ index: Int) -> AuditEvent {
        AuditEvent(
            kind: .read, item: ItemIdentity(accessGroup: "g", account: "a\(index)", service: "s"),
            accessControl: "ak;dacl(true)", decision: .allow, reasons: [.classAvailable(.whenUnlocked), .noConstraint],
            processID: 7, userID: 8)
    }

    @Test func recordsAreTheRecordsTheAppendsReturned() throws {
        let sink = InMemoryAuditSink()
        var returned: [AuditRecord] = []
        for index in 0..<5 { returned.append(try sink.append(Self.event(index), at: Timestamp(seconds: Int64(index)))) }
        #expect(sink.records == returned)
        // More appends after the records were asked for, and a batch.
        for index in 5..<8 { returned.append(try sink.append(Self.event(index), at: Timestamp(seconds: 9))) }
        returned += try sink.append(contentsOf: [Self.event(8), Self.event(9)], at: Timestamp(seconds: 10))
        let records = sink.records
        #expect(records == returned)
        #expect(records.map(\.line) == returned.map(\.line))
        #expect(
            sink.head == AuditHead(genesis: String(repeating: "0", count: 64), sequence: 10, hash: returned[9].hash))
        #expect(AuditVerifier.verify(lines: records.map(\.line), head: sink.head) == .intact(records: 10))
    }
}
