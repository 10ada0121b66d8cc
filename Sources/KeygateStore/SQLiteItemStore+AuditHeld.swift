public import KeygateAudit
public import KeygatePolicy
import Synchronization

/// Audit records held in the store (the `audit_held` table) with the item writes they
/// describe: a trail's records offered by ``holdAuditRecords(_:head:for:)`` are inserted by the
/// next item transaction, with the trail's new head as its anchor, in the item's own commit,
/// and deleted by the first item transaction after the trail says it is flushed that far
/// (``releaseHeldAuditRecords(through:for:)``).
extension SQLiteItemStore {
    /// True: item writes carry held records.
    public var holdsAuditRecords: Bool { true }

    /// Keeps `records` and `head` to be written by the next item transaction (after any
    /// records of `trail` offered before them); writes nothing now.
    public func holdAuditRecords(_ records: [HeldAuditRecord], head: AuditHead, for trail: String) {
        auditOffers.withLock { offers in
            offers.held[trail, default: AuditOffers.Held(records: [], head: head)].records += records
            offers.held[trail]?.head = head
        }
    }

    /// Takes back the records of `trail` offered and not yet committed.
    /// - Returns: whether there were any.
    public func withdrawHeldAuditRecords(for trail: String) -> Bool {
        auditOffers.withLock { $0.held.removeValue(forKey: trail) != nil }
    }

    /// Keeps a release of `trail`'s held records up to `sequence` for the next item
    /// transaction, and takes back offered records that far (they are durable in the trail).
    public func releaseHeldAuditRecords(through sequence: UInt64, for trail: String) {
        auditOffers.withLock { offers in
            offers.releases[trail] = max(offers.releases[trail] ?? 0, sequence)
            guard var held = offers.held[trail] else { return }
            held.records.removeAll { $0.sequence <= sequence }
            if held.records.isEmpty {
                offers.held[trail] = nil
                // The head they led to is durable in the trail: still worth an anchor.
                if held.head.sequence <= sequence { offers.anchors[trail] = held.head }
            } else {
                offers.held[trail] = held
            }
        }
    }

    /// The records of `trail` held in the store, by sequence number.
    /// - Throws: `errSecIO` when the database cannot be read.
    public func heldAuditRecords(for trail: String) throws(KeygateError) -> [HeldAuditRecord] {
        try connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) -> [HeldAuditRecord] in
            let statement = try connection.statement(
                "SELECT sequence, line FROM audit_held WHERE trail = ? ORDER BY sequence")
            defer { statement.reset() }
            try statement.bind([.text(trail)])
            var records: [HeldAuditRecord] = []
            while try statement.step() {
                records.append(
                    HeldAuditRecord(sequence: UInt64(bitPattern: statement.integer(0)), line: statement.text(1) ?? ""))
            }
            return records
        }
    }

    /// How many records of `trail` the store holds, and the last one's sequence number.
    /// - Throws: `errSecIO` when the database cannot be read.
    public func heldAuditRecordExtent(for trail: String) throws(KeygateError) -> (count: Int, last: UInt64)? {
        try connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) -> (Int, UInt64)? in
            let statement = try connection.statement(
                "SELECT count(*), max(sequence) FROM audit_held WHERE trail = ?")
            defer { statement.reset() }
            try statement.bind([.text(trail)])
            guard try statement.step(), statement.integer(0) > 0 else { return nil }
            return (Int(statement.integer(0)), UInt64(bitPattern: statement.integer(1)))
        }
    }

    /// Writes `offers` in the transaction `connection` has open: releases first, then held
    /// records, then anchors (a trail's held head, when it has one, over its offered anchor).
    static func write(_ offers: AuditOffers, _ connection: SQLiteConnection) throws(KeygateError) {
        for (trail, through) in offers.releases {
            try connection.statement(
                .releaseAuditRecords, "DELETE FROM audit_held WHERE trail = ? AND sequence <= ?"
            ).run([.text(trail), .integer(Int64(bitPattern: through))])
        }
        for (trail, held) in offers.held {
            let insert = try connection.statement(
                .holdAuditRecord, "INSERT OR REPLACE INTO audit_held (trail, sequence, line) VALUES (?, ?, ?)")
            for record in held.records {
                insert.reset()
                try insert.run([.text(trail), .integer(Int64(bitPattern: record.sequence)), .text(record.line)])
            }
        }
        for (trail, head) in offers.anchors where offers.held[trail] == nil {
            try writeAnchor(head, for: trail, connection)
        }
        for (trail, held) in offers.held { try writeAnchor(held.head, for: trail, connection) }
    }
}

/// What trails have offered an ``SQLiteItemStore`` for its next item transaction, by trail path.
struct AuditOffers: Sendable {
    /// A trail's held records and the head after them.
    struct Held: Equatable, Sendable {
        var records: [HeldAuditRecord]
        var head: AuditHead
    }

    /// Anchors (durable heads) to write.
    var anchors: [String: AuditHead] = [:]
    /// Records to hold, with their head (written as the anchor).
    var held: [String: Held] = [:]
    /// Held records to delete, up to a sequence number.
    var releases: [String: UInt64] = [:]

    var isEmpty: Bool { anchors.isEmpty && held.isEmpty && releases.isEmpty }

    /// Forgets what `written` (a snapshot of these offers, now committed) wrote, keeping what
    /// was offered since.
    mutating func forget(_ written: AuditOffers) {
        for (trail, head) in written.anchors where anchors[trail] == head { anchors[trail] = nil }
        for (trail, through) in written.releases where releases[trail] == through { releases[trail] = nil }
        for (trail, done) in written.held {
            guard var offered = held[trail], let last = done.records.last?.sequence else { continue }
            offered.records.removeAll { $0.sequence <= last }
            held[trail] = offered.records.isEmpty ? nil : offered
        }
    }
}
