public import KeygatePolicy

/// Keeps a second copy of where an audit trail stands (its genesis, last sequence number and
/// hash: an ``AuditHead``) outside the trail, in the item store's database. A trail that
/// vanished (deleted together with its head), was restarted (a fresh genesis) or was cut back
/// with a matching head no longer reaches its anchor, and is refused instead of verifying
/// intact.
///
/// Duties of a conforming type: return the anchor last saved for `trail` (nil when none was);
/// save it before returning, so that it survives the process being killed (a power loss may
/// take it back to an earlier save: it then lags). The sink saves (or offers) an anchor only
/// after the records it covers are durable, so an anchor may lag its trail but never leads it:
/// a crash is never reported as tampering. A store that holds records
/// (``holdsAuditRecords``) must write held records and their head in the same commit as the
/// item write that carries them (so the anchor never leads the trail and the records the
/// store holds together), and return them from ``heldAuditRecords(for:)`` until released.
///
/// The anchor is not saved after every record (``JSONLinesAuditSink/anchorInterval``): what it
/// guarantees once one exists is that a trail deleted or restarted (with its head) is always
/// caught, and a trail cut back together with a consistent head is caught when the cut goes
/// below the anchor. The records past the anchor (fewer than the interval, unless an item
/// write has carried a newer one) are protected by the head file alone.
public protocol AuditAnchorStore: Sendable {
    /// The anchor saved for the trail at `trail`, or nil.
    func auditAnchor(for trail: String) throws(KeygateError) -> AuditHead?
    /// Saves `head` as the anchor of the trail at `trail`.
    func saveAuditAnchor(_ head: AuditHead, for trail: String) throws(KeygateError)
    /// Offers `head` (durable in the trail) as the anchor of the trail at `trail`, to be saved
    /// with the store's next write of its own, if one comes, at no extra cost; never a write of
    /// its own. A later ``saveAuditAnchor(_:for:)`` or offer for the same trail replaces it.
    /// The default does nothing (the anchor then moves only when saved).
    func offerAuditAnchor(_ head: AuditHead, for trail: String)

    /// Whether this store can hold a trail's records in its own item transactions
    /// (``holdAuditRecords(_:head:for:)``). The default is false: the sink then `fdatasync`s every
    /// record, as it always did.
    var holdsAuditRecords: Bool { get }
    /// Offers `records` (written to the trail at `trail`, not yet flushed) and `head` (the
    /// trail's head after them) to be written by the store's next item transaction, in the
    /// same commit as the item: the records become durable with it, and ``auditAnchor(for:)``
    /// answers `head` from then on (the store writes it, or reads it back from the last held
    /// record). Never a write of its own. Only called when ``holdsAuditRecords``.
    func holdAuditRecords(_ records: [HeldAuditRecord], head: AuditHead, for trail: String)
    /// Takes back the records of `trail` offered and not yet committed by an item transaction.
    /// - Returns: whether there were any (the sink then `fdatasync`s the trail instead).
    func withdrawHeldAuditRecords(for trail: String) -> Bool
    /// Offers to forget the held records of `trail` up to `sequence` (the trail is durable
    /// that far): the next item transaction releases them in its own commit (`UInt64.max`: a
    /// trail let go, all of them). Offered records not yet committed up to `sequence` are taken
    /// back at once.
    func releaseHeldAuditRecords(through sequence: UInt64, for trail: String)
    /// The records of `trail` the store holds (committed and not yet released), by sequence
    /// number: what a power loss may have taken from the trail's end.
    func heldAuditRecords(for trail: String) throws(KeygateError) -> [HeldAuditRecord]
    /// How many records of `trail` the store holds, the last one's sequence number (nil when
    /// none), and the sequence number the store last released them through (0 when never):
    /// what a sink looks at on first use, reading the records themselves only when they may
    /// reach past the trail. The sink holds no record more than ``JSONLinesAuditSink/heldLimit``
    /// past the release it knows of (a store may keep that many in a ring). Read with them, in
    /// the same read: the anchor, as ``auditAnchor(for:)`` answers it (so a sink's first use
    /// asks the store once, not twice).
    func heldAuditRecordExtent(for trail: String) throws(KeygateError) -> (
        count: Int, last: UInt64?, released: UInt64, anchor: AuditHead?
    )
}

extension AuditAnchorStore {
    /// Does nothing: the anchor moves only when saved.
    public func offerAuditAnchor(_ head: AuditHead, for trail: String) {}
    /// False: records are flushed in the trail, never held.
    public var holdsAuditRecords: Bool { false }
    /// Does nothing (never called when ``holdsAuditRecords`` is false).
    public func holdAuditRecords(_ records: [HeldAuditRecord], head: AuditHead, for trail: String) {}
    /// False: nothing is ever held.
    public func withdrawHeldAuditRecords(for trail: String) -> Bool { false }
    /// Does nothing: nothing is ever held.
    public func releaseHeldAuditRecords(through sequence: UInt64, for trail: String) {}
    /// None: nothing is ever held.
    public func heldAuditRecords(for trail: String) throws(KeygateError) -> [HeldAuditRecord] { [] }
    /// None: nothing is ever held; the anchor as ``auditAnchor(for:)`` answers it.
    public func heldAuditRecordExtent(for trail: String) throws(KeygateError) -> (
        count: Int, last: UInt64?, released: UInt64, anchor: AuditHead?
    ) { (0, nil, 0, try auditAnchor(for: trail)) }
}

/// One record of a trail held in the item store (``AuditAnchorStore/holdAuditRecords(_:head:for:)``):
/// its sequence number and its exact line (without the newline), as written to the trail.
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
