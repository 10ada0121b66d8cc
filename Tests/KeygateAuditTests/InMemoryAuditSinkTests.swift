import KeygateAudit
import KeygatePolicy
import Testing

/// Issue 10 point 1: the in-memory sink keeps what each record was sealed from and seals the
/// records again when asked; they must be exactly the records its appends returned.
@Suite struct InMemoryAuditSinkTests {
    static func event(_ index: Int) -> AuditEvent {
        AuditEvent(
            kind: .read, item: ItemIdentity(accessGroup: "g", account: "a\(index)", service: "s"),
            accessControl: TestControls.plain, decision: .allow,
            reasons: [.classAvailable(.whenUnlocked), .noConstraint],
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

    /// `store` (the auditor's path) keeps the event and seals it when the trail is looked at:
    /// the head and records are those `append` gives, with stores and appends mixed in any order.
    @Test func storedEventsSealAsAppendedOnesWhenLookedAt() throws {
        let appended = InMemoryAuditSink()
        let stored = InMemoryAuditSink()
        for index in 0..<4 {
            try appended.append(Self.event(index), at: Timestamp(seconds: Int64(index)))
            stored.store(Self.event(index), at: Timestamp(seconds: Int64(index)))
        }
        #expect(stored.head == appended.head)
        #expect(stored.head.sequence == 4)
        // An append after stores seals after them; records asked for in between stay current.
        appended.store(Self.event(4), at: Timestamp(seconds: 4))
        stored.store(Self.event(4), at: Timestamp(seconds: 4))
        #expect(stored.records == appended.records)
        let record = try stored.append(Self.event(5), at: Timestamp(seconds: 5))
        #expect(record == (try appended.append(Self.event(5), at: Timestamp(seconds: 5))))
        #expect(record.sequence == 6)
        stored.store(Self.event(6), at: Timestamp(seconds: 6))
        try appended.append(Self.event(6), at: Timestamp(seconds: 6))
        #expect(stored.head == appended.head)
        #expect(stored.records == appended.records)
        #expect(AuditVerifier.verify(lines: stored.records.map(\.line), head: stored.head) == .intact(records: 7))
    }

    /// The auditor stores into the in-memory sink (nothing sealed on the decision's path); the
    /// trail it leaves is the one appends would have made.
    @Test func theAuditorsRecordsAreTheAppendedOnes() throws {
        let memory = InMemoryAuditSink()
        let appended = InMemoryAuditSink()
        let auditor = Auditor(sink: memory, processID: 7, userID: 8, clock: FixedClock())
        for index in 0..<3 {
            try auditor.record(Self.event(index))
            try appended.append(Self.event(index), at: Timestamp(seconds: 42))
        }
        #expect(memory.records == appended.records)
        #expect(memory.head == appended.head)
    }
}

/// A clock that always says 42 s.
private struct FixedClock: KeygateClock {
    func now() -> Timestamp { Timestamp(seconds: 42) }
}
