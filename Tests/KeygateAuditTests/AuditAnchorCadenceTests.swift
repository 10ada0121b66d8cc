import Foundation
import KeygateAudit
import KeygatePolicy
import KeygateStore
import KeygateTesting
import Synchronization
import Testing

@testable import KeygateAudit

/// Issue 10 (session 19): the anchor is saved in a transaction of its own only when there is
/// none yet or the durable trail is the interval past it; otherwise it rides on the next item
/// write a facade call of the trail makes (the call joins the write, ``AuditCall``). A read costs no store transaction, and what the anchor guards is still
/// refused: a deleted or restarted trail, a cut-back below the anchor.
@Suite struct AuditAnchorCadenceTests {
    /// The store, counting the transactions of their own (anchor saves) that reach it.
    final class CountingAnchors: MetadataStore {
        let store: SQLiteItemStore
        let saves = Mutex(0)

        init(_ store: SQLiteItemStore) { self.store = store }

        func readMetadata<T: Sendable>(_ body: (any MetadataReading) throws(KeygateError) -> T) throws(KeygateError)
            -> T
        {
            try store.readMetadata(body)
        }

        func writeMetadata(_ changes: [MetadataChange]) throws(KeygateError) {
            saves.withLock { $0 += 1 }
            try store.writeMetadata(changes)
        }

        var metadataOwner: AnyObject { store }
    }

    /// An item in group `group.a`.
    static func item(account: String = "alice") -> NewItem {
        NewItem(
            fields: ItemFields(
                identity: ItemIdentity(accessGroup: "group.a", account: account, service: "api"), label: nil,
                generic: nil, accessControl: try! AccessControl(protection: .whenUnlocked),
                created: Timestamp(seconds: 1), modified: Timestamp(seconds: 1)),
            data: SecretData("s3cret"))
    }

    struct World {
        let directory: TemporaryDirectory
        var database: String { directory.path + "/items.db" }
        var trail: String { directory.path + "/audit.jsonl" }

        init() throws { directory = try TemporaryDirectory() }

        /// Appends `count` records, each through a sink of its own (one process per record).
        func append(_ count: Int, to anchors: any MetadataStore, interval: Int) throws {
            for index in 0..<count {
                let sink = JSONLinesAuditSink(path: trail, anchors: anchors, anchorInterval: interval)
                try sink.append(AuditTrailFileTests.event(index), at: Timestamp(seconds: Int64(index)))
            }
        }

        /// Appends one record through `sink` inside a facade call, which then makes its item
        /// write `write` (the call joins it), as the facade does.
        func call(
            _ sink: JSONLinesAuditSink, record index: Int, write: (AuditCall) throws(KeygateError) -> Void
        ) throws(KeygateError) {
            let call = AuditCall()
            try sink.store(AuditTrailFileTests.event(index), at: Timestamp(seconds: Int64(index)), in: call)
            try write(call)
        }

        func anchor() throws -> UInt64? { try SQLiteItemStore(path: database).auditAnchor(for: trail)?.sequence }
    }

    /// A `keygate get` in a fresh process: its record is durable, and the store, which already
    /// holds an anchor, sees no write at all (no transaction, nothing in its WAL).
    @Test func anAppendBelowTheIntervalWritesNothingToTheStore() throws {
        let world = try World()
        do {
            let store = try SQLiteItemStore(path: world.database)
            try world.append(1, to: store, interval: 64)
        }
        #expect(try world.anchor() == 1, "the first record is anchored: there was none")
        let anchors = CountingAnchors(try SQLiteItemStore(path: world.database))
        try world.append(10, to: anchors, interval: 64)
        #expect(anchors.saves.withLock { $0 } == 0)
        let wal = try? FileManager.default.attributesOfItem(atPath: world.database + "-wal")[.size] as? Int
        #expect((wal ?? 0) == 0, "nothing was written to the store's WAL")
        #expect(try AuditTrailFile.verify(at: world.trail, anchors: anchors.store) == .intact(records: 11))
        #expect(try world.anchor() == 1)
    }

    /// Fresh sinks (processes) each read the anchor with the trail and save it once the trail
    /// is the interval past it.
    @Test func theAnchorAdvancesAtTheInterval() throws {
        let world = try World()
        let anchors = CountingAnchors(try SQLiteItemStore(path: world.database))
        try world.append(4, to: anchors, interval: 4)
        #expect(anchors.saves.withLock { $0 } == 1)
        #expect(try world.anchor() == 1)
        try world.append(1, to: anchors, interval: 4)
        #expect(anchors.saves.withLock { $0 } == 2)
        #expect(try world.anchor() == 5, "record 5 is 4 past the anchor")
        // The default interval: 64 records past it.
        try world.append(63, to: anchors, interval: JSONLinesAuditSink.defaultAnchorInterval)
        #expect(try world.anchor() == 5)
        try world.append(1, to: anchors, interval: JSONLinesAuditSink.defaultAnchorInterval)
        #expect(try world.anchor() == 69)
        #expect(anchors.saves.withLock { $0 } == 3)
    }

    /// A cut-back with a consistent head is caught once it goes below the anchor; records past
    /// the anchor are guarded by the head alone (what the DocC article "The audit trail" says).
    @Test func aCutBackBelowTheAnchorIsRefused() throws {
        let world = try World()
        let store = try SQLiteItemStore(path: world.database)
        try world.append(3, to: store, interval: 4)
        let head = try String(contentsOfFile: world.trail + ".head", encoding: .utf8)
        let kept = try String(contentsOfFile: world.trail, encoding: .utf8)
        try world.append(1, to: store, interval: 4)
        #expect(try store.auditAnchor(for: world.trail)?.sequence == 1)
        // Cut back to record 3, above the anchor: only the head could have told.
        try kept.write(toFile: world.trail, atomically: false, encoding: .utf8)
        try head.write(toFile: world.trail + ".head", atomically: false, encoding: .utf8)
        #expect(try AuditTrailFile.verify(at: world.trail, anchors: store) == .intact(records: 3))
        // Anchor at 5, then cut back to 3: refused by verify and by the next append.
        try world.append(2, to: store, interval: 4)
        #expect(try store.auditAnchor(for: world.trail)?.sequence == 5)
        try kept.write(toFile: world.trail, atomically: false, encoding: .utf8)
        try head.write(toFile: world.trail + ".head", atomically: false, encoding: .utf8)
        guard case .broken(_, let reason) = try AuditTrailFile.verify(at: world.trail, anchors: store) else {
            Issue.record("a cut-back below the anchor must be found")
            return
        }
        #expect(reason.contains("records 4…5 are missing"))
        #expect(throws: KeygateError.self) { try world.append(1, to: store, interval: 4) }
    }

    /// Once an anchor exists, a trail deleted with its head is refused, whatever the interval.
    @Test func aDeletedTrailIsRefusedBelowTheInterval() throws {
        let world = try World()
        let store = try SQLiteItemStore(path: world.database)
        try world.append(5, to: store, interval: 64)
        try FileManager.default.removeItem(atPath: world.trail)
        try FileManager.default.removeItem(atPath: world.trail + ".head")
        #expect(throws: KeygateError.self) { try world.append(1, to: store, interval: 64) }
        #expect(!FileManager.default.fileExists(atPath: world.trail + ".head"), "not started afresh")
    }

    /// An item write a call of the trail joins carries the offered anchor in its own
    /// transaction; a write that fails keeps the offer for the next one; a write no call joins
    /// carries nothing.
    @Test func anItemWriteCarriesTheOfferedAnchor() throws {
        let world = try World()
        let store = try SQLiteItemStore(path: world.database)
        let sink = JSONLinesAuditSink(path: world.trail, durability: .groupCommit(records: 1), anchors: store)
        try world.call(sink, record: 0) { (_) throws(KeygateError) in }
        try world.call(sink, record: 1) { (_) throws(KeygateError) in }
        sink.flush()
        #expect(try store.auditAnchor(for: world.trail)?.sequence == 1, "saved once, then offered")
        try store.insert([Self.item()])
        #expect(try store.auditAnchor(for: world.trail)?.sequence == 1, "a write no call joins carries nothing")
        try world.call(sink, record: 2) { (call) throws(KeygateError) in
            #expect(throws: KeygateError.self) { try store.insert([Self.item()], joining: call) }  // a duplicate
        }
        sink.flush()
        #expect(try store.auditAnchor(for: world.trail)?.sequence == 1, "rolled back: the offer stays")
        var added: [ItemRecord] = []
        try world.call(sink, record: 3) { (call) throws(KeygateError) in
            added = try store.insert([Self.item(account: "bob")], joining: call)
        }
        #expect(try store.auditAnchor(for: world.trail)?.sequence ?? 0 >= 3)
        sink.flush()
        try world.call(sink, record: 4) { (call) throws(KeygateError) in
            try store.delete(added.map(\.id), joining: call)
        }
        #expect(try store.auditAnchor(for: world.trail)?.sequence ?? 0 >= 4)
        #expect(try AuditTrailFile.verify(at: world.trail, anchors: store) == .intact(records: 5))
    }

    /// An offer older than a later save never takes the anchor back.
    @Test func aSaveSupersedesAnOlderOffer() throws {
        let world = try World()
        let store = try SQLiteItemStore(path: world.database)
        let sink = JSONLinesAuditSink(path: world.trail, anchors: store, anchorInterval: 2)
        try world.call(sink, record: 0) { (_) throws(KeygateError) in }  // saved 1
        try world.call(sink, record: 1) { (_) throws(KeygateError) in }  // offered 2
        try world.call(sink, record: 2) { (call) throws(KeygateError) in  // saved 3
            try store.insert([Self.item()], joining: call)
        }
        #expect(try store.auditAnchor(for: world.trail)?.sequence == 3)
    }
}
