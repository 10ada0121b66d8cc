import Foundation
import Keygate
import KeygatePolicy
import KeygateTesting
import Synchronization
import Testing

@testable import KeygateAudit
@testable import KeygateStore

/// Issue 10 (session 20): the records a store holds are a ring of slots per trail, overwritten
/// in place (the table neither grows nor shrinks), released by a release row that only moves
/// forward, and a sink never holds a record more than the ring's size past the release it
/// knows of.
@Suite(.serialized) struct HeldAuditRingTests {
    /// A keychain over a SQLite store at `directory`, auditing into its durable trail anchored
    /// in that store, as one `keygate` process runs it (a store and sink of its own).
    struct Process {
        let store: SQLiteItemStore
        let sink: JSONLinesAuditSink
        let keychain: Keychain

        init(_ directory: String) throws {
            store = try SQLiteItemStore(path: directory + "/items.db")
            sink = JSONLinesAuditSink(path: directory + "/audit.jsonl", anchors: store)
            keychain = Keychain(
                store: store, accessGroups: ["group.app"], authenticator: ScriptedAuthenticator(),
                device: SimulatedDevice(), auditor: Auditor(sink: sink))
        }

        /// How many early flushes of held records the sink has started.
        var earlyFlushes: Int { sink.shared.state.withLock { $0.earlyFlushes } }

        func add(_ account: String) async throws(KeygateError) {
            try await keychain.add(AddRequest(service: "api", account: account, data: SecretData("v-\(account)")))
        }

        func read(_ account: String) async throws(KeygateError) {
            _ = try await keychain.copyMatching(ItemQuery(service: "api", account: account, returnData: true))
        }

        /// The row ids of the store's held-record rows (slots and releases), in order.
        func heldRows() throws -> [Int64] {
            try store.connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) -> [Int64] in
                let statement = try connection.statement(
                    "SELECT rowid FROM metadata WHERE name LIKE 'audit.held:%' ORDER BY rowid")
                defer { statement.reset() }
                var rows: [Int64] = []
                while try statement.step() { rows.append(statement.integer(0)) }
                return rows
            }
        }

        func execute(_ sql: String) throws {
            try store.connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) in
                try connection.execute(sql)
            }
        }
    }

    /// Past the first round, adds overwrite their slots in place: the same rows (row ids) however
    /// many adds run, at most one slot per record of the ring and the release; the trail verifies.
    @Test func theRingNeitherGrowsNorShrinks() async throws {
        let directory = try TemporaryDirectory()
        let process = try Process(directory.path)
        let ring = JSONLinesAuditSink.heldLimit
        for index in 0..<(ring + 2) { try await process.add("a\(index)") }
        let rows = try process.heldRows()
        #expect(rows.count <= ring + 1)
        for index in 0..<(2 * ring) { try await process.add("b\(index)") }
        #expect(try process.heldRows() == rows, "the same rows, overwritten in place")
        let trail = directory.path + "/audit.jsonl"
        let records = 3 * ring + 2
        #expect(try AuditTrailFile.verify(at: trail, anchors: process.store) == .intact(records: records))
        let held = try process.store.heldAuditRecords(for: trail).map(\.sequence)
        #expect(!held.isEmpty && held.count <= ring)
        #expect(held.last == UInt64(records))
    }

    /// A record whose commit comes after a later record's in the same slot leaves the later one;
    /// a release hides what it covers and never moves back.
    @Test func aSlotKeepsItsLatestRecordAndAReleaseOnlyMovesForward() async throws {
        let directory = try TemporaryDirectory()
        let process = try Process(directory.path)
        let other = directory.path + "/other.jsonl"
        let ring = UInt64(JSONLinesAuditSink.heldLimit)
        let head = AuditHead(genesis: "00", sequence: ring + 6, hash: "00")
        let late = HeldAuditRecord(sequence: ring + 6, line: "{\"late\": 1}")
        try process.store.writeAuditOffer(AuditOffer(held: [late], heldHead: head), for: other)
        let early = HeldAuditRecord(sequence: 6, line: "{\"early\": 1}")
        try process.store.writeAuditOffer(AuditOffer(held: [early], heldHead: head), for: other)
        #expect(try process.store.heldAuditRecords(for: other) == [late])
        try process.store.writeAuditOffer(AuditOffer(release: ring + 6), for: other)
        #expect(try process.store.heldAuditRecords(for: other).isEmpty)
        try process.store.writeAuditOffer(AuditOffer(release: 3), for: other)
        #expect(try process.store.heldAuditRecordExtent(for: other).released == ring + 6)
    }

    /// Reads flush and commit nothing, but their release rides the anchor's own saves, so a
    /// later process still holds its add. A process that finds the store's release more than
    /// the ring behind the trail (here: none at all) flushes its add instead of holding it, and
    /// its commit moves the release up: the next processes hold their adds again.
    @Test func aLaggingReleaseCostsOneFlushThenAddsAreHeldAgain() async throws {
        let directory = try TemporaryDirectory()
        let trail = directory.path + "/audit.jsonl"
        let reads = JSONLinesAuditSink.heldLimit + 6
        do {
            let first = try Process(directory.path)
            try await first.add("a")
            for _ in 0..<reads { try await first.read("a") }
            let second = try Process(directory.path)
            try await second.add("b")
            #expect(try second.store.heldAuditRecords(for: trail).map(\.sequence) == [UInt64(reads + 2)])
            let stem = "audit.held:\(trail.utf8.count):\(trail);"
            try second.execute("DELETE FROM metadata WHERE name = '\(stem)'")
        }
        let records = UInt64(reads + 3)
        let third = try Process(directory.path)
        try await third.add("c")
        #expect(try third.store.heldAuditRecords(for: trail).isEmpty, "flushed, not held")
        #expect(try third.store.heldAuditRecordExtent(for: trail).released == records)
        try await third.add("d")
        #expect(try third.store.heldAuditRecords(for: trail).map(\.sequence) == [records + 1])
        let fourth = try Process(directory.path)
        try await fourth.add("e")
        #expect(try fourth.store.heldAuditRecords(for: trail).map(\.sequence) == [records + 1, records + 2])
        #expect(try AuditTrailFile.verify(at: trail, anchors: fourth.store) == .intact(records: Int(records) + 2))
    }

    /// Half the ring past the last durable record, the trail is flushed off the caller: once
    /// that is done, the next add's commit writes the release with its own record.
    @Test func heldRecordsAreFlushedEarlyOffTheCaller() async throws {
        let directory = try TemporaryDirectory()
        let process = try Process(directory.path)
        let trail = directory.path + "/audit.jsonl"
        let half = JSONLinesAuditSink.heldLimit / 2
        for index in 0..<half { try await process.add("a\(index)") }
        JSONLinesAuditSink.waitForHeldFlushes()
        try await process.add("b")
        #expect(try process.store.heldAuditRecordExtent(for: trail).released == UInt64(half))
        #expect(try process.store.heldAuditRecords(for: trail).map(\.sequence) == [UInt64(half + 1)])
    }

    /// A read's record is flushed by the read itself before it returns (no transaction commits
    /// it), so however far the trail runs past the last record known durable, a read starts no
    /// early flush (in a `keygate get`, a thread and a second flush of the same bytes); an add,
    /// whose commit made its record durable, still does once half the ring is past.
    @Test func aReadStartsNoEarlyFlush() async throws {
        let directory = try TemporaryDirectory()
        let trail = directory.path + "/audit.jsonl"
        let half = JSONLinesAuditSink.heldLimit / 2
        do {
            let writer = try Process(directory.path)
            try await writer.add("a")
        }
        // One read per process, as `keygate get` runs: reads never move the store's release, so
        // the later ones find the trail more than half the ring past it.
        var started = 0
        for _ in 0..<(2 * half) {
            let reader = try Process(directory.path)
            try await reader.read("a")
            started += reader.earlyFlushes
        }
        #expect(started == 0)
        #expect(try AuditTrailFile.verify(at: trail, anchors: nil) == .intact(records: 2 * half + 1))
        // However far behind the store's release stands (an add that finds it more than the ring
        // behind flushes itself first), a ring's worth of adds takes the trail half a ring past
        // the last record known durable.
        let adder = try Process(directory.path)
        for index in 0..<JSONLinesAuditSink.heldLimit { try await adder.add("b\(index)") }
        JSONLinesAuditSink.waitForHeldFlushes()
        #expect(adder.earlyFlushes >= 1)
    }

    /// An early flush that fails changes nothing: records are held up to the bound, and the
    /// append past it must flush itself, and fails (errSecIO) while flushing fails.
    @Test func aFailedEarlyFlushChangesNothing() async throws {
        let directory = try TemporaryDirectory()
        let process = try Process(directory.path)
        let trail = directory.path + "/audit.jsonl"
        JSONLinesAuditSink.failingFlushes.withLock { _ = $0.insert(trail) }
        defer { JSONLinesAuditSink.failingFlushes.withLock { _ = $0.remove(trail) } }
        for index in 0..<JSONLinesAuditSink.heldLimit { try await process.add("a\(index)") }
        JSONLinesAuditSink.waitForHeldFlushes()
        #expect(try process.store.heldAuditRecordExtent(for: trail).released == 0)
        #expect(try process.store.heldAuditRecords(for: trail).count == JSONLinesAuditSink.heldLimit)
        let error = await #expect(throws: KeygateError.self) { try await process.add("past the bound") }
        #expect(error?.status == .io)
    }
}
