import KeygatePolicy
import KeygateStore
import KeygateTesting
import Synchronization
import Testing

@testable import KeygateAudit

/// Issue 10 point 1: group commit flushes on a background queue; the anchor follows each
/// flush there, and a flush that failed makes the next append flush synchronously (and fail
/// while flushing fails), so a failure is never silently passed over.
@Suite struct GroupCommitFlushTests {
    private static func event(_ index: Int) -> AuditEvent { AuditTrailFileTests.event(index) }

    @Test func theAnchorFollowsABackgroundFlush() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let store = try SQLiteItemStore(path: directory.path + "/items.db")
        let sink = JSONLinesAuditSink(
            path: path, durability: .groupCommit(records: 2), anchors: store, anchorInterval: 2)
        for index in 0..<5 { try sink.append(Self.event(index), at: Timestamp(seconds: Int64(index))) }
        sink.flush()  // waits for the flush in flight
        // Flushed (and anchored: the first, then 2 past it) after records 2 and 4; record 5 is
        // pending, so not anchored.
        #expect(try store.auditAnchor(for: path)?.sequence == 4)
        #expect(try AuditTrailFile.verify(at: path, anchors: store) == .intact(records: 5))
    }

    /// Issue 10 (session 19): group commit saves the anchor at a flush only when the interval
    /// says so, not after every flush.
    @Test func aFlushBelowTheIntervalSavesNoAnchor() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let store = try SQLiteItemStore(path: directory.path + "/items.db")
        let sink = JSONLinesAuditSink(
            path: path, durability: .groupCommit(records: 2), anchors: store, anchorInterval: 6)
        for index in 0..<6 { try sink.append(Self.event(index), at: Timestamp(seconds: Int64(index))) }
        sink.flush()
        #expect(try store.auditAnchor(for: path)?.sequence == 2, "the first flush only (none before)")
        for index in 6..<8 { try sink.append(Self.event(index), at: Timestamp(seconds: Int64(index))) }
        sink.flush()
        #expect(try store.auditAnchor(for: path)?.sequence == 8, "the flush 6 records past it")
    }

    @Test func aFailedBackgroundFlushFailsTheNextAppend() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let sink = JSONLinesAuditSink(path: path, durability: .groupCommit(records: 2))
        JSONLinesAuditSink.failingFlushes.withLock { _ = $0.insert(path) }
        var removed = false
        defer { if !removed { JSONLinesAuditSink.failingFlushes.withLock { _ = $0.remove(path) } } }
        for index in 0..<2 { try sink.append(Self.event(index), at: Timestamp(seconds: Int64(index))) }
        sink.flush()  // the background flush has failed by now
        do {
            try sink.append(Self.event(2), at: Timestamp(seconds: 2))
            Issue.record("an append after a failed flush must flush, and fail while flushing fails")
        } catch {
            #expect(error.status == .io)
            #expect(error.message.contains("an earlier flush"))
        }
        JSONLinesAuditSink.failingFlushes.withLock { _ = $0.remove(path) }
        removed = true
        try sink.append(Self.event(3), at: Timestamp(seconds: 3))
        // Record 3 was written before its flush failed: it stays in the chain, taken over
        // without a recover record (under group commit the head file lags the trail anyway).
        sink.flush()
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 4))
        #expect(try AuditTrailFile.records(at: path).allSatisfy { $0.event.kind != .recover })
    }
}
