public import KeygateAudit
public import KeygatePolicy
import Synchronization

/// Audit records held in the store with the item writes they describe: a trail's records
/// offered by ``holdAuditRecords(_:head:for:)`` are inserted by the next item transaction,
/// with the trail's new head as its anchor, in the item's own commit, and deleted by the first
/// item transaction after the trail says it is flushed that far
/// (``releaseHeldAuditRecords(through:for:)``).
///
/// They are rows of the `metadata` table beside the anchor, named
/// `audit.held:<length of the trail's path>:<path>:<sequence, 20 digits>` (the length keeps one
/// trail's names from ever falling in another's range; the digits sort them by sequence). The
/// last held record is the trail's anchor when it is past the one saved (``auditAnchor(for:)``
/// reads it so), so an add writes its record and no anchor row: a table of their own plus the
/// anchor row made about 5 more WAL writes per add than the anchor alone; this makes about 1.5.
extension SQLiteItemStore {
    /// The names of `trail`'s held records: the first name's prefix, and the bound just past them
    /// (`;` follows `:`; built by appending, never by cutting a `String`, which walks it).
    private static func heldRange(_ trail: String) -> (from: String, to: String) {
        let stem = "audit.held:\(trail.utf8.count):\(trail)"
        return (stem + ":", stem + ";")
    }

    /// The name of `trail`'s held record `sequence` (its digits zero-padded to 20, from a
    /// constant: no `String(repeating:count:)` per record).
    private static func heldName(_ trail: String, _ sequence: UInt64) -> String {
        let digits = String(sequence)
        let padding = String(decoding: zeros.utf8.prefix(max(20 - digits.utf8.count, 0)), as: UTF8.self)
        return heldRange(trail).from + padding + digits
    }

    /// Twenty zeros, for ``heldName(_:_:)``.
    private static let zeros = "00000000000000000000"

    /// The sequence number at the end of a held record's name.
    private static func sequence(ofHeldName name: String) -> UInt64? {
        guard let colon = name.utf8.lastIndex(of: UInt8(ascii: ":")) else { return nil }
        return UInt64(Substring(name.utf8[name.utf8.index(after: colon)...]))
    }

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
        auditOffers.withLock { offers in
            guard let held = offers.held.removeValue(forKey: trail) else { return false }
            // A first anchor offered with them leads the durable trail as much as they do.
            if offers.anchors[trail] == held.head { offers.anchors[trail] = nil }
            return true
        }
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

    /// How many records of `trail` the store holds, and the last of them, when any: one
    /// statement (SQLite gives a bare column from the row whose `max` it returns), shared by
    /// ``heldAuditRecordExtent(for:)`` and ``auditAnchor(for:)`` so a process prepares it once.
    /// - Throws: `errSecIO` when the database cannot be read or the record's name is damaged.
    func heldExtent(of trail: String, _ connection: SQLiteConnection) throws(KeygateError)
        -> (count: Int, last: HeldAuditRecord)?
    {
        let statement = try connection.statement(
            "SELECT count(*), max(name), value FROM metadata WHERE name >= ? AND name < ?")
        defer { statement.reset() }
        let range = Self.heldRange(trail)
        try statement.bind([.text(range.from), .text(range.to)])
        guard try statement.step(), statement.integer(0) > 0 else { return nil }
        guard let sequence = statement.text(1).flatMap(Self.sequence(ofHeldName:)) else {
            throw KeygateError(.io, "a held audit record of \(trail) in \(path) has a damaged name")
        }
        return (Int(statement.integer(0)), HeldAuditRecord(sequence: sequence, line: statement.text(2) ?? ""))
    }

    /// The records of `trail` held in the store, by sequence number.
    /// - Throws: `errSecIO` when the database cannot be read.
    public func heldAuditRecords(for trail: String) throws(KeygateError) -> [HeldAuditRecord] {
        try connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) -> [HeldAuditRecord] in
            let statement = try connection.statement(
                "SELECT name, value FROM metadata WHERE name >= ? AND name < ? ORDER BY name")
            defer { statement.reset() }
            let range = Self.heldRange(trail)
            try statement.bind([.text(range.from), .text(range.to)])
            var records: [HeldAuditRecord] = []
            while try statement.step() {
                guard let sequence = statement.text(0).flatMap(Self.sequence(ofHeldName:)) else {
                    throw KeygateError(.io, "a held audit record of \(trail) in \(path) has a damaged name")
                }
                records.append(HeldAuditRecord(sequence: sequence, line: statement.text(1) ?? ""))
            }
            return records
        }
    }

    /// How many records of `trail` the store holds, and the last one's sequence number.
    /// - Throws: `errSecIO` when the database cannot be read.
    public func heldAuditRecordExtent(for trail: String) throws(KeygateError) -> (count: Int, last: UInt64)? {
        try connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) -> (Int, UInt64)? in
            try heldExtent(of: trail, connection).map { ($0.count, $0.last.sequence) }
        }
    }

    /// Writes `offers` in the transaction `connection` has open: releases first, then held
    /// records, then anchors (a trail's held records carry its anchor: ``auditAnchor(for:)``
    /// reads their last as the head, so it is not written again).
    static func write(_ offers: AuditOffers, _ connection: SQLiteConnection) throws(KeygateError) {
        for (trail, through) in offers.releases {
            try connection.statement(.releaseAuditRecords, "DELETE FROM metadata WHERE name >= ? AND name <= ?").run([
                .text(heldRange(trail).from), .text(heldName(trail, through)),
            ])
        }
        for (trail, held) in offers.held {
            let insert = try connection.statement(
                .holdAuditRecord, "INSERT OR REPLACE INTO metadata (name, value) VALUES (?, ?)")
            for record in held.records {
                insert.reset()
                try insert.run([.text(heldName(trail, record.sequence)), .text(record.line)])
            }
        }
        for (trail, head) in offers.anchors { try writeAnchor(head, for: trail, connection) }
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
