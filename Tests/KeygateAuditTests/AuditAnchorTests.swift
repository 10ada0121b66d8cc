import Foundation
import KeygateAudit
import KeygatePolicy
import KeygateStore
import KeygateTesting
import Testing

/// Issue 9 point 5: the store keeps the trail's anchor, so a trail deleted together with its
/// head, or restarted, is noticed instead of verifying intact.
@Suite struct AuditAnchorTests {
    struct World {
        let directory: TemporaryDirectory
        let store: SQLiteItemStore
        var trail: String { directory.path + "/audit.jsonl" }

        init() throws {
            directory = try TemporaryDirectory()
            store = try SQLiteItemStore(path: directory.path + "/items.db")
        }

        func append(
            _ count: Int, anchored: Bool = true, interval: Int = JSONLinesAuditSink.defaultAnchorInterval
        ) throws {
            let sink = JSONLinesAuditSink(path: trail, anchors: anchored ? store : nil, anchorInterval: interval)
            for index in 0..<count {
                try sink.append(AuditTrailFileTests.event(index), at: Timestamp(seconds: Int64(index)))
            }
        }

        func removeTrail() throws {
            try FileManager.default.removeItem(atPath: trail)
            try FileManager.default.removeItem(atPath: trail + ".head")
        }

        func verify() throws -> AuditVerification { try AuditTrailFile.verify(at: trail, anchors: store) }
    }

    /// Issue 10 (session 19): the first durable record is anchored (there is none yet), the
    /// ones after it only once the interval is reached.
    @Test func theAnchorFollowsTheTrail() throws {
        let world = try World()
        try world.append(3)
        let anchor = try #require(try world.store.auditAnchor(for: world.trail))
        #expect(anchor.sequence == 1, "the first record, then none until 64 past it")
        #expect(try world.verify() == .intact(records: 3))
        // Reopening the store keeps it.
        let reopened = try SQLiteItemStore(path: world.directory.path + "/items.db")
        #expect(try reopened.auditAnchor(for: world.trail) == anchor)
    }

    @Test func aTrailDeletedWithItsHeadIsNoticed() throws {
        let world = try World()
        try world.append(3)
        try world.removeTrail()
        guard case .broken(1, let reason) = try world.verify() else {
            Issue.record("a vanished trail must not verify")
            return
        }
        #expect(reason.contains("deleted or restarted"))
        do {
            try world.append(1)
            Issue.record("a vanished trail must not be started afresh")
        } catch let error as KeygateError {
            #expect(error.status == .io)
            #expect(error.message.contains("reached record 1"))
        }
        #expect(!FileManager.default.fileExists(atPath: world.trail + ".head"), "no new head was written")
        // Without the store's anchor, the same files verify: that is what the anchor is for.
        #expect(try AuditTrailFile.verify(at: world.trail) == .intact(records: 0))
    }

    @Test func aRestartedTrailIsNoticed() throws {
        let world = try World()
        try world.append(3)
        try world.removeTrail()
        try world.append(5, anchored: false)  // a fresh trail, written by someone else
        guard case .broken(1, let reason) = try world.verify() else {
            Issue.record("a restarted trail must not verify")
            return
        }
        #expect(reason.contains("begins from genesis"))
        #expect(throws: KeygateError.self) { try world.append(1) }
    }

    @Test func aTrailCutBackWithItsHeadIsNoticed() throws {
        let world = try World()
        try world.append(2, interval: 1)
        let head = try String(contentsOfFile: world.trail + ".head", encoding: .utf8)
        let kept = try String(contentsOfFile: world.trail, encoding: .utf8)
        try world.append(3, interval: 1)
        try kept.write(toFile: world.trail, atomically: false, encoding: .utf8)
        try head.write(toFile: world.trail + ".head", atomically: false, encoding: .utf8)
        #expect(try AuditTrailFile.verify(at: world.trail) == .intact(records: 2), "consistent without the anchor")
        guard case .broken(3, let reason) = try world.verify() else {
            Issue.record("records cut with the head must be found")
            return
        }
        #expect(reason.contains("records 3…5 are missing"))
    }

    /// A trail lost on purpose is accepted only when asked, and the trail says which anchor it replaced.
    @Test func aRestartIsAcceptedOnlyWhenAsked() throws {
        let world = try World()
        try world.append(3)
        try world.removeTrail()
        let sink = JSONLinesAuditSink(path: world.trail, anchors: world.store)
        #expect(throws: KeygateError.self) { try sink.repair(at: Timestamp(seconds: 9)) }
        let repair = try #require(try sink.repair(at: Timestamp(seconds: 9), restartingAnchor: true))
        #expect(repair.anchorRestarted)
        #expect(repair.record == 1)
        #expect(try world.verify() == .intact(records: 1))
        let record = try AuditTrailFile.records(at: world.trail)[0]
        #expect(record.event.kind == .recover && record.event.decision == .restarted)
        guard case .anchorRestarted(let problem)? = record.event.notes.first else {
            Issue.record("the restart must say why the anchor was replaced: \(record.event.notes)")
            return
        }
        #expect(problem.contains("reached record 1"))
        try world.append(1)
        #expect(try world.verify() == .intact(records: 2))
    }

    /// The anchor may lag (records written without it, or a crash before it was saved): never tampering.
    @Test func aLaggingAnchorIsNotTampering() throws {
        let world = try World()
        try world.append(2, interval: 2)
        try world.append(3, anchored: false)
        #expect(try world.store.auditAnchor(for: world.trail)?.sequence == 1)
        #expect(try world.verify() == .intact(records: 5))
        try world.append(1, interval: 2)
        #expect(try world.store.auditAnchor(for: world.trail)?.sequence == 6)
        #expect(try world.verify() == .intact(records: 6))
    }
}
