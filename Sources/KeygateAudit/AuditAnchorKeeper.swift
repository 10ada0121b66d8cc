public import KeygateItems
public import KeygatePolicy

/// Keeps a second copy of where an audit trail stands (its ``AuditHead``: genesis, last sequence
/// number and hash) outside the trail, in the named rows of the item store the trail audits
/// (``KeygateItems/MetadataStore``), with the records a ``JSONLinesAuditSink`` committed there
/// together with the item writes they describe. A trail that vanished (deleted together with its
/// head), was restarted (a fresh genesis) or was cut back with a matching head no longer reaches
/// its anchor, and is refused instead of verifying intact.
///
/// The rows, by trail path (unchanged since they were first written this way, so stores made by
/// earlier versions read the same):
/// - `audit.anchor:<path>`: the saved anchor (an ``AuditHead``'s line), written in a transaction
///   of its own when due, or with the next item write;
/// - `audit.held:<length of the path>:<path>:<slot, 2 digits>`: held records in a ring of
///   ``JSONLinesAuditSink/heldLimit`` slots, record `n` in slot `n % heldLimit`, each the
///   sequence number in 20 digits then the line (so values sort by sequence), overwritten in
///   place by a later record only (the table neither grows nor shrinks; an add writes one page
///   of it);
/// - `audit.held:<length>:<path>;`: the release, the sequence number the trail is durable
///   through (it only grows); only the records past it are held.
///
/// The last held record is the anchor when it is past the saved one, so an item write carries
/// its record and no anchor row. An anchor may lag its trail (a power loss may take the store
/// back to an earlier commit) but never leads it: a crash is never reported as tampering.
public struct AuditAnchorKeeper: Sendable {
    /// Where the rows are.
    public let store: any MetadataStore
    /// The trail's path, which names its rows.
    public let trail: String

    /// The keeper of `trail`'s rows in `store`.
    public init(store: any MetadataStore, trail: String) {
        self.store = store
        self.trail = trail
    }

    /// What the store keeps of a trail, read in one read: the anchor (the saved one, or the
    /// head at the last held record past it), how many records it holds past the release, the
    /// last of them, and the release.
    public struct Kept: Sendable {
        /// The anchor, nil when none was ever saved.
        public var anchor: AuditHead?
        /// How many records are held past the release.
        public var count: Int
        /// The last held record's sequence number, nil when none is held.
        public var last: UInt64?
        /// The sequence number the trail is durable through, as the store last heard (0: never).
        public var released: UInt64
    }

    // MARK: - Names

    private var anchorName: String { "audit.anchor:" + trail }

    /// The names of the ring's slots start with `from`; `to`, just past them (`;` follows `:`),
    /// names the release.
    private var ring: (from: String, to: String) {
        let stem = "audit.held:\(trail.utf8.count):\(trail)"
        return (stem + ":", stem + ";")
    }

    /// How many slots the ring has.
    static let slots = UInt64(JSONLinesAuditSink.heldLimit)

    private func slotName(_ sequence: UInt64) -> String {
        let slot = sequence % Self.slots
        return ring.from + (slot < 10 ? "0" : "") + String(slot)
    }

    /// `sequence` in 20 digits.
    static func padded(_ sequence: UInt64) -> String {
        let digits = String(sequence)
        return String(repeating: "0", count: max(20 - digits.utf8.count, 0)) + digits
    }

    // MARK: - Reading

    /// What the store keeps of the trail, in one read.
    /// - Throws: `errSecIO` when the rows cannot be read or a held record or the release is
    ///   damaged; `errSecDecode` when the saved anchor is damaged.
    public func kept() throws(KeygateError) -> Kept {
        let ring = self.ring
        let (text, extent, released) = try store.readMetadata {
            (rows) throws(KeygateError) -> (String?, (count: Int, greatest: String?), UInt64) in
            let released = try release(in: rows)
            let extent = try rows.extent(from: ring.from, before: ring.to, valuesAbove: Self.padded(released) + "~")
            return (try rows.value(of: anchorName), extent, released)
        }
        let last = try extent.greatest.map { (value) throws(KeygateError) in try record(value) }
        return Kept(anchor: try anchor(text, last: last), count: extent.count, last: last?.sequence, released: released)
    }

    /// The anchor (``Kept/anchor``).
    public func anchor() throws(KeygateError) -> AuditHead? { try kept().anchor }

    /// The records held past the release, by sequence number, read in one read.
    /// - Throws: `errSecIO` when the rows cannot be read or one is damaged.
    public func heldRecords() throws(KeygateError) -> [HeldAuditRecord] {
        try anchorAndHeldRecords().held
    }

    /// The anchor (``Kept/anchor``) and the records held past the release, of one commit: what a
    /// verifier checks a trail against.
    /// - Throws: as ``kept()`` and ``heldRecords()``.
    public func anchorAndHeldRecords() throws(KeygateError) -> (anchor: AuditHead?, held: [HeldAuditRecord]) {
        let ring = self.ring
        let (text, values) = try store.readMetadata { (rows) throws(KeygateError) -> (String?, [String]) in
            let above = Self.padded(try release(in: rows)) + "~"
            return (
                try rows.value(of: anchorName), try rows.values(from: ring.from, before: ring.to, valuesAbove: above)
            )
        }
        var records: [HeldAuditRecord] = []
        records.reserveCapacity(values.count)
        for value in values { records.append(try record(value)) }
        return (try anchor(text, last: records.last), records)
    }

    private func release(in rows: any MetadataReading) throws(KeygateError) -> UInt64 {
        guard let text = try rows.value(of: ring.to) else { return 0 }
        guard let released = UInt64(text) else {
            throw KeygateError(.io, "the audit record release of \(trail) in the item store is damaged")
        }
        return released
    }

    private func record(_ value: String) throws(KeygateError) -> HeldAuditRecord {
        let utf8 = value.utf8
        guard utf8.count > 20, let sequence = UInt64(Substring(utf8.prefix(20))) else {
            throw KeygateError(.io, "a held audit record of \(trail) in the item store is damaged")
        }
        return HeldAuditRecord(sequence: sequence, line: String(Substring(utf8.dropFirst(20))))
    }

    /// The anchor the saved row `text` and the `last` held record make: the head at that record
    /// when it is past the saved anchor, else the saved anchor; nil without a saved row.
    private func anchor(_ text: String?, last: HeldAuditRecord?) throws(KeygateError) -> AuditHead? {
        guard let text else { return nil }
        let saved: AuditHead
        do {
            saved = try AuditHead(line: text, file: "the item store (audit anchor of \(trail))")
        } catch {
            throw KeygateError(.decode, "the audit anchor of \(trail) in the item store is damaged: \(error)")
        }
        guard let last, last.sequence > saved.sequence else { return saved }
        return AuditHead(genesis: saved.genesis, sequence: last.sequence, hash: last.hash)
    }

    // MARK: - Writing

    /// Saves `offer`'s changes (an anchor, a release) in a transaction of their own.
    func save(_ offer: AuditOffer) throws(KeygateError) {
        try store.writeMetadata(changes(for: offer))
    }

    /// The rows that write `offer`: the release first, then the held records, then the anchor
    /// (not written with held records, whose last stands for it). A release through
    /// `UInt64.max` (a trail let go) deletes the ring and the release.
    func changes(for offer: AuditOffer) -> [MetadataChange] {
        var changes: [MetadataChange] = []
        if let through = offer.release {
            if through == .max {
                changes.append(.deleteRange(from: ring.from, through: ring.to))
            } else {
                changes.append(.raise(name: ring.to, value: Self.padded(through)))
            }
        }
        for record in offer.held {
            changes.append(.raise(name: slotName(record.sequence), value: Self.padded(record.sequence) + record.line))
        }
        if let anchor = offer.anchor { changes.append(.set(name: anchorName, value: anchor.line)) }
        return changes
    }
}

/// What a trail's sink asks its store to write (``AuditAnchorKeeper``): an anchor, records to
/// hold with the head after them, and a release. Written by the next item write the sink's
/// facade call joins (``AuditCall``), or saved on its own when an anchor is due.
struct AuditOffer: Equatable, Sendable {
    /// A durable head to write as the anchor.
    var anchor: AuditHead?
    /// Records written to the trail and not yet flushed, to commit with an item.
    var held: [HeldAuditRecord] = []
    /// The head after ``held``.
    var heldHead: AuditHead?
    /// The sequence number the trail is durable through, to write as the release.
    var release: UInt64?

    var isEmpty: Bool { anchor == nil && held.isEmpty && release == nil }

    /// Adds records to hold, and the head after them.
    mutating func hold(_ records: [HeldAuditRecord], head: AuditHead) {
        held += records
        heldHead = head
    }

    /// Takes back the records not yet committed.
    /// - Returns: whether there were any (the trail must then be flushed instead).
    mutating func withdrawHeld() -> Bool {
        guard !held.isEmpty else { return false }
        // A first anchor offered with them leads the durable trail as much as they do.
        if anchor == heldHead { anchor = nil }
        held = []
        heldHead = nil
        return true
    }

    /// Notes that the trail is durable through `sequence`: the release moves there, and records
    /// held that far need no commit any more (the head they led to is then worth an anchor).
    mutating func release(through sequence: UInt64) {
        release = max(release ?? 0, sequence)
        held.removeAll { $0.sequence <= sequence }
        if held.isEmpty, let head = heldHead {
            if head.sequence <= sequence { anchor = head }
            heldHead = nil
        }
    }

    /// Forgets what `written` (a copy of this offer, now committed) wrote, keeping what was
    /// offered since.
    mutating func forget(_ written: AuditOffer) {
        if let anchor = written.anchor, self.anchor == anchor { self.anchor = nil }
        if let through = written.release, release == through { release = nil }
        if let last = written.held.last?.sequence {
            held.removeAll { $0.sequence <= last }
            if held.isEmpty { heldHead = nil }
        }
    }
}

/// One record of a trail held in the item store: its sequence number and its exact line
/// (without the newline), as written to the trail.
public struct HeldAuditRecord: Hashable, Sendable {
    /// The record's sequence number.
    public var sequence: UInt64
    /// The record's line, byte for byte as in the trail.
    public var line: String

    /// A held record.
    public init(sequence: UInt64, line: String) {
        self.sequence = sequence
        self.line = line
    }

    /// The record's hash (what the next record names as `prev`, and a head at it holds).
    public var hash: String { AuditCrypto.sha256Hex(Array(line.utf8)) }
}

extension AuditHead {
    /// Why this head (of the trail as found) does not reach `anchor`, or nil when it does: the
    /// same genesis, at least as far, and the same hash when just as far.
    public func mismatch(with anchor: AuditHead) -> String? {
        if genesis != anchor.genesis {
            return "the trail was deleted or restarted: the store's anchor says it began from genesis "
                + "\(anchor.genesis.prefix(16))… and reached record \(anchor.sequence), but it begins from "
                + "genesis \(genesis.prefix(16))…"
        }
        if sequence < anchor.sequence {
            return "records \(sequence + 1)…\(anchor.sequence) are missing: the store's anchor says the trail "
                + "reached record \(anchor.sequence)"
        }
        if sequence == anchor.sequence && hash != anchor.hash {
            return "record \(sequence) does not match the store's anchor"
        }
        return nil
    }
}
