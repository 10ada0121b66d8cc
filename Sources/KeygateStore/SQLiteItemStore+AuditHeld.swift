public import KeygateAudit
public import KeygatePolicy
import Synchronization

/// Audit records held in the store with the item writes they describe: a trail's records
/// offered by ``holdAuditRecords(_:head:for:)`` are written by the next item transaction,
/// with the trail's new head as its anchor, in the item's own commit, and released by the first
/// item transaction after the trail says it is flushed that far
/// (``releaseHeldAuditRecords(through:for:)``).
///
/// They are rows of the `metadata` table beside the anchor, in a ring of ``heldSlots`` rows
/// per trail, named `audit.held:<length of the trail's path>:<path>:<slot, 2 digits>` (the
/// length keeps one trail's names from ever falling in another's range), record `n` in slot
/// `n % heldSlots`, its value the sequence number in 20 digits then the line (so values sort
/// by sequence). A slot is overwritten in place (an upsert that keeps its row id), never
/// deleted and inserted again: the table neither grows nor shrinks, so an add writes one page
/// of it (no index entry, no new or freed page, no page 1), where a row per record inserted
/// and deleted made about 2.6 more WAL frames per add than no audit, this about 1.1. A slot
/// is only overwritten by a later record (an older one's commit coming late leaves it).
/// Released means durable in the trail: the release is the sequence number in the row
/// `audit.held:<length>:<path>;` (just past the ring's names; it only grows), and only the
/// records past it are held. The sink never holds a record more than ``heldSlots`` past the
/// release it knows of (``KeygateAudit/JSONLinesAuditSink/heldLimit``), so a slot overwritten is released.
/// The last held record is the trail's anchor when it is past the one saved
/// (``auditAnchor(for:)`` reads it so), so an add writes its record and no anchor row.
extension SQLiteItemStore {
    /// How many slots a trail's held records have: ``JSONLinesAuditSink/heldLimit``.
    static let heldSlots = UInt64(JSONLinesAuditSink.heldLimit)

    /// The names of `trail`'s held records: the first name's prefix, and the bound just past
    /// them, which names the release (`;` follows `:`; built by appending, never by cutting a
    /// `String`, which walks it).
    private static func heldRange(_ trail: String) -> (from: String, to: String) {
        let stem = "audit.held:\(trail.utf8.count):\(trail)"
        return (stem + ":", stem + ";")
    }

    /// The name of the slot of `trail`'s held record `sequence`.
    private static func heldName(_ trail: String, _ sequence: UInt64) -> String {
        let slot = sequence % heldSlots
        return heldRange(trail).from + (slot < 10 ? "0" : "") + String(slot)
    }

    /// `sequence` in 20 digits (what a held value starts with, and the release is).
    private static func padded(_ sequence: UInt64) -> String {
        let digits = String(sequence)
        return String(decoding: zeros.utf8.prefix(max(20 - digits.utf8.count, 0)), as: UTF8.self) + digits
    }

    /// Twenty zeros, for ``padded(_:)``.
    private static let zeros = "00000000000000000000"

    /// The held record a ring slot's value holds (nil when damaged): its sequence number in 20
    /// digits, then the line.
    private static func heldRecord(value: String?) -> HeldAuditRecord? {
        guard let utf8 = value?.utf8, utf8.count > 20, let sequence = UInt64(Substring(utf8.prefix(20))) else {
            return nil
        }
        return HeldAuditRecord(sequence: sequence, line: String(Substring(utf8.dropFirst(20))))
    }

    /// The release of `trail`: the sequence number its records are durable through (0 when none).
    /// - Throws: `errSecIO` when the database cannot be read or the release is damaged.
    func heldRelease(of trail: String, _ connection: SQLiteConnection) throws(KeygateError) -> UInt64 {
        let statement = try connection.statement("SELECT value FROM metadata WHERE name = ?")
        defer { statement.reset() }
        try statement.bind([.text(Self.heldRange(trail).to)])
        guard try statement.step() else { return 0 }
        guard let released = statement.text(0).flatMap({ UInt64($0) }) else {
            throw KeygateError(.io, "the audit record release of \(trail) in \(path) is damaged")
        }
        return released
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

    /// How many records of `trail` the store holds (past its release), the last of them when
    /// any, and the release: one statement for the records (the last is the greatest value: values
    /// start with the sequence number in 20 digits), shared by ``heldAuditRecordExtent(for:)`` and
    /// ``auditAnchor(for:)`` so a process prepares it once.
    /// - Throws: `errSecIO` when the database cannot be read or a held record is damaged.
    func heldExtent(of trail: String, _ connection: SQLiteConnection) throws(KeygateError)
        -> (count: Int, last: HeldAuditRecord?, released: UInt64)
    {
        let statement = try connection.statement(
            "SELECT count(*), max(value) FROM metadata WHERE name >= ? AND name < ? AND value > ?")
        defer { statement.reset() }
        let released = try bindHeld(statement, of: trail, connection)
        guard try statement.step(), statement.integer(0) > 0 else { return (0, nil, released) }
        let last = try heldRecord(value: statement.text(1), of: trail)
        return (Int(statement.integer(0)), last, released)
    }

    /// Binds `statement`'s three parameters to the rows of `trail`'s ring past its release (a
    /// value starting with a later sequence number sorts after the release's).
    /// - Returns: the release.
    @discardableResult
    private func bindHeld(_ statement: SQLiteStatement, of trail: String, _ connection: SQLiteConnection)
        throws(KeygateError) -> UInt64
    {
        let released = try heldRelease(of: trail, connection)
        let range = Self.heldRange(trail)
        try statement.bind([.text(range.from), .text(range.to), .text(Self.padded(released) + "~")])
        return released
    }

    /// The held record a row of `trail`'s ring holds.
    /// - Throws: `errSecIO` when the row is damaged.
    private func heldRecord(value: String?, of trail: String) throws(KeygateError) -> HeldAuditRecord {
        guard let record = Self.heldRecord(value: value) else {
            throw KeygateError(.io, "a held audit record of \(trail) in \(path) is damaged")
        }
        return record
    }

    /// The records of `trail` held in the store (past its release), by sequence number; the
    /// release and the records are read in one read transaction.
    /// - Throws: `errSecIO` when the database cannot be read or a held record is damaged.
    public func heldAuditRecords(for trail: String) throws(KeygateError) -> [HeldAuditRecord] {
        try readTransaction { (connection) throws(KeygateError) -> [HeldAuditRecord] in
            let statement = try connection.statement(
                "SELECT value FROM metadata WHERE name >= ? AND name < ? AND value > ? ORDER BY value")
            defer { statement.reset() }
            try bindHeld(statement, of: trail, connection)
            var records: [HeldAuditRecord] = []
            while try statement.step() {
                records.append(try heldRecord(value: statement.text(0), of: trail))
            }
            return records
        }
    }

    /// How many records of `trail` the store holds, the last one's sequence number, the
    /// sequence number they are released (durable in the trail) through, and the trail's
    /// anchor (``auditAnchor(for:)``), all in one read transaction: of one commit, even while
    /// other processes write (and one pair of WAL read-lock calls instead of three).
    /// - Throws: `errSecIO` when the database cannot be read; `errSecDecode` when the saved
    ///   anchor is damaged.
    public func heldAuditRecordExtent(for trail: String) throws(KeygateError)
        -> (count: Int, last: UInt64?, released: UInt64, anchor: AuditHead?)
    {
        let (extent, text) = try readTransaction {
            (connection) throws(KeygateError) -> ((count: Int, last: HeldAuditRecord?, released: UInt64), String?) in
            (try heldExtent(of: trail, connection), try Self.anchorText(of: trail, connection))
        }
        return (extent.count, extent.last?.sequence, extent.released, try anchor(text, held: extent.last, of: trail))
    }

    /// Sets a `metadata` row's value, or raises it when the row exists and holds an earlier one
    /// (values start with a zero-padded sequence number): a held record's ring slot is only
    /// ever overwritten by a later record, a release only moves forward.
    private static let raiseMetadata =
        "INSERT INTO metadata (name, value) VALUES (?, ?) "
        + "ON CONFLICT (name) DO UPDATE SET value = excluded.value WHERE excluded.value > value"

    /// Writes `offers` in the transaction `connection` has open: releases first, then held
    /// records, then anchors (a trail's held records carry its anchor: ``auditAnchor(for:)``
    /// reads their last as the head, so it is not written again). A release moves the trail's
    /// release row forward (never back); a release through `UInt64.max` (a trail let go)
    /// deletes the trail's ring and release. A held record overwrites its slot in place, unless
    /// the slot holds a later record already.
    static func write(_ offers: AuditOffers, _ connection: SQLiteConnection) throws(KeygateError) {
        for (trail, through) in offers.releases {
            let range = heldRange(trail)
            if through == .max {
                try connection.statement("DELETE FROM metadata WHERE name >= ? AND name <= ?").run([
                    .text(range.from), .text(range.to),
                ])
                continue
            }
            try connection.statement(.raiseMetadata, raiseMetadata).run([.text(range.to), .text(padded(through))])
        }
        for (trail, held) in offers.held {
            let upsert = try connection.statement(.raiseMetadata, raiseMetadata)
            for record in held.records {
                upsert.reset()
                try upsert.run([.text(heldName(trail, record.sequence)), .text(padded(record.sequence) + record.line)])
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
