import Foundation
import Keygate
import KeygatePolicy
import KeygateStore
import KeygateTesting
import Synchronization
import Testing

@testable import KeygateAudit

/// Issue 10 (session 20): an item write's record rides in the item's own transaction (one
/// flush per durable add), a record no transaction commits is flushed before the call
/// returns, and a trail a power loss cut short is restored from the store.
@Suite(.serialized) struct HeldAuditRecordTests {
    /// A keychain over a SQLite store, auditing into a durable trail anchored in that store,
    /// as `keygate` runs it.
    struct World {
        let directory: TemporaryDirectory
        let store: SQLiteItemStore
        let sink: JSONLinesAuditSink
        let keychain: Keychain
        var trail: String { directory.path + "/audit.jsonl" }

        init() throws {
            directory = try TemporaryDirectory()
            store = try SQLiteItemStore(path: directory.path + "/items.db")
            sink = JSONLinesAuditSink(path: directory.path + "/audit.jsonl", anchors: store)
            keychain = Keychain(
                store: store, accessGroups: ["group.app"], authenticator: ScriptedAuthenticator(),
                device: SimulatedDevice(), auditor: Auditor(sink: sink))
        }

        func add(_ account: String) async throws(KeygateError) {
            try await keychain.add(AddRequest(service: "api", account: account, data: SecretData("v-\(account)")))
        }

        func read(_ account: String) async throws(KeygateError) {
            _ = try await keychain.copyMatching(ItemQuery(service: "api", account: account, returnData: true))
        }

        /// The trail's lines.
        func lines() throws -> [String] { try AuditTrailFile.lines(at: trail) }

        /// The sequence numbers the store holds.
        func held() throws -> [UInt64] { try store.heldAuditRecords(for: trail).map(\.sequence) }

        /// Runs `body` while every flush of the trail fails (`EIO`): what succeeds did not flush it.
        func withFailingFlushes<T>(_ body: () async throws -> T) async rethrows -> T {
            JSONLinesAuditSink.failingFlushes.withLock { _ = $0.insert(trail) }
            defer { JSONLinesAuditSink.failingFlushes.withLock { _ = $0.remove(trail) } }
            return try await body()
        }

        /// Cuts the trail to `length` bytes, as a power loss that lost what was not flushed.
        func cutTrail(to length: Int, thenAppend tail: [UInt8] = []) throws {
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: trail))
            try handle.truncate(atOffset: UInt64(length))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(tail))
            try handle.close()
        }

        /// The sequence number the head file names (nil when it names none).
        func headFileSequence() throws -> UInt64? {
            guard case .found(let head) = try AuditHeadFile.read(trail + ".head", privacy: .ownerOnly) else {
                return nil
            }
            return head.sequence
        }

        func trailLength() throws -> Int {
            try FileManager.default.attributesOfItem(atPath: trail)[.size] as? Int ?? -1
        }
    }

    /// An add makes one flush: the store's commit. The trail is not `fsync`ed (the add
    /// succeeds while its flushes fail), the record is in the store's held table, with its
    /// line as written, and the anchor is the new head.
    @Test func anAddsRecordIsHeldInItsOwnTransaction() async throws {
        let world = try World()
        try await world.withFailingFlushes { try await world.add("a") }
        let lines = try world.lines()
        #expect(lines.count == 1)
        let held = try world.store.heldAuditRecords(for: world.trail)
        #expect(held == [HeldAuditRecord(sequence: 1, line: lines[0])])
        #expect(try world.store.auditAnchor(for: world.trail)?.sequence == 1)
        #expect(try AuditTrailFile.verify(at: world.trail, anchors: world.store) == .intact(records: 1))
        // A second add: still no flush of the trail.
        try await world.withFailingFlushes { try await world.add("b") }
        #expect(try world.held() == [1, 2])
    }

    /// A read commits nothing: its record is flushed before its value is returned, and a
    /// read whose flush fails fails (errSecIO). Once flushed, the next item write releases
    /// the held records in its own commit.
    @Test func aReadFlushesAndTheNextWriteReleases() async throws {
        let world = try World()
        try await world.add("a")
        await #expect(throws: KeygateError.self) {
            try await world.withFailingFlushes { try await world.read("a") }
        }
        try await world.read("a")
        #expect(try world.held() == [1], "the release waits for an item write")
        try await world.add("b")
        let lines = try world.lines()
        #expect(try world.held() == [UInt64(lines.count)], "only the new add's record is held")
        #expect(try AuditTrailFile.verify(at: world.trail, anchors: world.store) == .intact(records: lines.count))
    }

    /// A failed item write (a duplicate) commits nothing: its decision's record is flushed
    /// before the call throws (it fails with errSecIO when it cannot be), and nothing of it
    /// stays offered to the store.
    @Test func aFailedWritesRecordIsFlushed() async throws {
        let world = try World()
        try await world.add("a")
        let error = await #expect(throws: KeygateError.self) {
            try await world.withFailingFlushes { try await world.add("a") }
        }
        #expect(error?.status == .io)
        let duplicate = await #expect(throws: KeygateError.self) { try await world.add("a") }
        #expect(duplicate?.status == .duplicateItem)
        #expect(world.sink.shared.offer.withLock { $0.held.isEmpty }, "nothing left offered")
        #expect(try world.held() == [1])
        let lines = try world.lines()
        #expect(lines.last?.contains("\"decision\": \"deny\"") == true)
        #expect(try AuditTrailFile.verify(at: world.trail, anchors: world.store) == .intact(records: lines.count))
    }

    /// A power loss after three adds took their records from the trail (and left a half
    /// line of the first, and the head file ahead of the trail): verify reports them held in
    /// the store, not a cut-back; the next append restores them, says so in a recover record,
    /// and the chain verifies intact, reaching the anchor.
    @Test(arguments: [false, true])
    func aTrailCutByAPowerLossIsRestoredFromTheStore(_ torn: Bool) async throws {
        let world = try World()
        try await world.add("first")
        try await world.read("first")  // flushed: the trail is durable this far
        let durable = try world.trailLength()
        for account in ["a", "b", "c"] { try await world.add(account) }
        let lines = try world.lines()
        #expect(lines.count == 5)
        let tail = torn ? Array(lines[2].utf8.prefix(40)) : []
        try world.cutTrail(to: durable, thenAppend: tail)
        let verdict = try AuditTrailFile.verify(at: world.trail, anchors: world.store)
        #expect(verdict == .heldInStore(records: 2, held: 3), "\(verdict)")
        #expect(verdict.description.contains("3 more held in the store"))
        // A fresh sink (the next process) restores them before it appends.
        let sink = JSONLinesAuditSink(path: world.trail, anchors: world.store)
        try sink.append(AuditEvent(kind: .read, decision: .allow), at: Timestamp(seconds: 9))
        let after = try world.lines()
        #expect(Array(after.prefix(5)) == lines, "the restored lines are the lost ones, byte for byte")
        let recover = try AuditRecord(line: after[5], file: world.trail, lineNumber: 6)
        #expect(recover.event.kind == .recover)
        #expect(recover.event.notes.contains(.restoredFromStore(records: 3)))
        #expect(recover.event.notes.contains(.tornTailCut(bytes: 40)) == torn)
        #expect(try AuditTrailFile.verify(at: world.trail, anchors: world.store) == .intact(records: 7))
    }

    /// `keygate audit repair`'s path restores them too, and says how many.
    @Test func repairRestoresHeldRecords() async throws {
        let world = try World()
        try await world.add("first")
        try await world.read("first")
        let durable = try world.trailLength()
        try await world.add("a")
        try world.cutTrail(to: durable)
        let repair = try JSONLinesAuditSink(path: world.trail, anchors: world.store).repair(at: Timestamp(seconds: 9))
        #expect(repair?.restored == 1)
        #expect(try AuditTrailFile.verify(at: world.trail, anchors: world.store) == .intact(records: 4))
    }

    /// Held records that do not follow the trail's last record (a gap: another store's
    /// records between, or tampering) are refused (errSecIO), never dropped, and verify
    /// calls the trail broken.
    @Test func heldRecordsThatDoNotChainAreRefused() async throws {
        let world = try World()
        try await world.add("a")
        try await world.read("a")
        let lines = try world.lines()
        // A forged record two past the trail's end, in the store's rows.
        try world.store.writeAuditOffer(
            AuditOffer(
                held: [HeldAuditRecord(sequence: UInt64(lines.count + 2), line: lines[0])],
                heldHead: AuditHead(genesis: "00", sequence: UInt64(lines.count + 2), hash: "00")),
            for: world.trail)
        try await world.add("b")
        let sink = JSONLinesAuditSink(path: world.trail, anchors: world.store)
        let error = #expect(throws: KeygateError.self) {
            try sink.append(AuditEvent(kind: .read, decision: .allow), at: Timestamp(seconds: 9))
        }
        #expect(error?.status == .io)
        #expect(error?.message.contains("do not follow") == true)
        if case .broken = try AuditTrailFile.verify(at: world.trail, anchors: world.store) {
        } else {
            Issue.record("a held record that does not chain must break the trail")
        }
    }

    /// At the bound, an add flushes instead of holding, and the held records are released
    /// by the next item write: the table stays small however many adds run.
    @Test func theHeldTableIsBounded() async throws {
        let world = try World()
        for index in 0..<(JSONLinesAuditSink.heldLimit + 3) { try await world.add("a\(index)") }
        let held = try world.held()
        #expect(held.count < JSONLinesAuditSink.heldLimit, "released at the bound: \(held.count)")
        #expect(held.count > 0)
        #expect(try AuditTrailFile.verify(at: world.trail, anchors: world.store) == .intact(records: 67))
    }

    /// An add committed with its record leaves the head file where it was (no lock, no write
    /// after the commit): the store's held record stands for it, so verify calls the trail
    /// intact, and the next process takes the tip over without a recover record.
    @Test func aHeadLeftBehindByHeldRecordsIsTakenOverWithoutARecoverRecord() async throws {
        let world = try World()
        try await world.add("a")
        try await world.add("b")
        #expect(try world.headFileSequence() == 0, "the head file is not written after a commit")
        #expect(try AuditTrailFile.verify(at: world.trail, anchors: world.store) == .intact(records: 2))
        // The next process (a sink of its own) appends after them, with no recover record.
        let sink = JSONLinesAuditSink(path: world.trail, anchors: world.store)
        let record = try sink.append(AuditEvent(kind: .read, decision: .allow), at: Timestamp(seconds: 9))
        #expect(record.sequence == 3)
        let lines = try world.lines()
        #expect(lines.count == 3)
        #expect(!lines.contains { $0.contains("\"kind\": \"recover\"") }, "no recover record")
        #expect(try world.headFileSequence() == 3, "a flushed append writes the head")
        #expect(try AuditTrailFile.verify(at: world.trail, anchors: world.store) == .intact(records: 3))
    }

    /// `keygate audit repair` finds nothing to repair in a trail whose head was left behind by
    /// held records, and brings the head file up to them.
    @Test func repairOfAHeadLeftBehindByHeldRecordsWritesNoRecord() async throws {
        let world = try World()
        try await world.add("a")
        let repair = try JSONLinesAuditSink(path: world.trail, anchors: world.store).repair(at: Timestamp(seconds: 9))
        #expect(repair == nil)
        #expect(try world.lines().count == 1)
        #expect(try world.headFileSequence() == 1)
    }

    /// A sink released after held adds writes the head file (``JSONLinesAuditSink/flush()``).
    @Test func aReleasedSinkWritesTheHeadItLeftBehind() async throws {
        let directory = try TemporaryDirectory()
        let trail = directory.path + "/audit.jsonl"
        let store = try SQLiteItemStore(path: directory.path + "/items.db")
        do {
            let keychain = Keychain(
                store: store, accessGroups: ["group.app"], authenticator: ScriptedAuthenticator(),
                device: SimulatedDevice(),
                auditor: Auditor(sink: JSONLinesAuditSink(path: trail, anchors: store)))
            try await keychain.add(AddRequest(service: "api", account: "a", data: SecretData("v")))
            guard case .found(let head) = try AuditHeadFile.read(trail + ".head", privacy: .ownerOnly) else {
                Issue.record("no head file")
                return
            }
            #expect(head.sequence == 0)
        }
        guard case .found(let head) = try AuditHeadFile.read(trail + ".head", privacy: .ownerOnly) else {
            Issue.record("no head file")
            return
        }
        #expect(head.sequence == 1)
    }

    /// Past a head left behind, a trail whose last record is not the one the store holds (an
    /// edited record that still chains) is not taken over: verify calls it broken, and the
    /// next append is refused (errSecIO).
    @Test func aTrailEndingInAnotherRecordThanTheHeldOneIsRefused() async throws {
        let world = try World()
        try await world.add("a")
        try await world.add("b")
        let lines = try world.lines()
        // Record 2 edited (its account), still naming record 1 as its previous.
        let forged = lines[1].replacingOccurrences(of: "\"b\"", with: "\"x\"")
        #expect(forged != lines[1])
        try world.cutTrail(to: lines[0].utf8.count + 1, thenAppend: Array((forged + "\n").utf8))
        if case .broken = try AuditTrailFile.verify(at: world.trail, anchors: world.store) {
        } else {
            Issue.record("a record other than the held one must break the trail")
        }
        let sink = JSONLinesAuditSink(path: world.trail, anchors: world.store)
        let error = #expect(throws: KeygateError.self) {
            try sink.append(AuditEvent(kind: .read, decision: .allow), at: Timestamp(seconds: 9))
        }
        #expect(error?.status == .io)
    }
}
