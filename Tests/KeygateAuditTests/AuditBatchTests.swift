import KeygatePolicy
import KeygateStore
import KeygateTesting
import Synchronization
import Testing

@testable import KeygateAudit

/// Issue 10 point 2: a call that decides many items (a `list`) writes its records with one
/// sink call, so the file sink writes and flushes them together instead of once per record.
@Suite struct AuditBatchTests {
    /// Counts how the auditor calls it, and keeps the records in memory.
    final class CountingSink: AuditSink {
        let memory = InMemoryAuditSink()
        let calls = Mutex<(single: Int, batches: [Int])>((0, []))

        func append(_ event: AuditEvent, at time: Timestamp) throws(KeygateError) -> AuditRecord {
            calls.withLock { $0.single += 1 }
            return try memory.append(event, at: time)
        }

        func append(contentsOf events: [AuditEvent], at time: Timestamp) throws(KeygateError) -> [AuditRecord] {
            calls.withLock { $0.batches.append(events.count) }
            var records: [AuditRecord] = []
            for event in events { records.append(try memory.append(event, at: time)) }
            return records
        }
    }

    static func event(_ index: Int) -> AuditEvent {
        AuditEvent(
            kind: .read,
            item: .init(accessGroup: "g", account: String(repeating: "a", count: 200) + "\(index)", service: "api"),
            decision: .allow)
    }

    @Test func aCallOfManyDecisionsIsOneSinkCall() async throws {
        let sink = CountingSink()
        let auditor = Auditor(sink: sink, isRequired: true)
        try await auditor.collecting { (auditor) async throws(KeygateError) in
            for index in 0..<100 { try auditor.record(Self.event(index)) }
        }
        let calls = sink.calls.withLock { $0 }
        #expect(calls.single == 0)
        #expect(calls.batches.count == 1)
        let records = try #require(calls.batches.first)
        #expect(records > 1, "100 long decisions need several records")
        #expect(sink.memory.records.reduce(0) { $0 + 1 + $1.event.more.count } == 100)
    }

    @Test func theFileSinkWritesABatchAsConsecutiveRecords() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let store = try SQLiteItemStore(path: directory.path + "/items.db")
        let sink = JSONLinesAuditSink(path: path, anchors: store, anchorInterval: 1)
        try sink.append(Self.event(0), at: Timestamp(seconds: 1))
        let records = try sink.append(contentsOf: (1...3).map(Self.event), at: Timestamp(seconds: 2))
        #expect(records.map(\.sequence) == [2, 3, 4])
        #expect(try store.auditAnchor(for: path)?.sequence == 4, "one flush, anchored at the last record")
        #expect(try AuditTrailFile.verify(at: path, anchors: store) == .intact(records: 4))
        #expect(try sink.append(contentsOf: [], at: Timestamp(seconds: 3)).isEmpty)
    }

    /// A batch is all or nothing: a record too long to write stops the whole batch.
    @Test func aBatchWithARecordTooLongWritesNothing() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let sink = JSONLinesAuditSink(path: path)
        try sink.append(Self.event(0), at: Timestamp(seconds: 1))
        var huge = Self.event(2)
        huge.notes = [.storeFailure(String(repeating: "r", count: AuditRecord.maximumLineLength))]
        #expect(throws: KeygateError.self) {
            try sink.append(contentsOf: [Self.event(1), huge], at: Timestamp(seconds: 2))
        }
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 1))
    }
}
