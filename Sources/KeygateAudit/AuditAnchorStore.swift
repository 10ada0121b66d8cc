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
/// a crash is never reported as tampering.
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
}

extension AuditAnchorStore {
    /// Does nothing: the anchor moves only when saved.
    public func offerAuditAnchor(_ head: AuditHead, for trail: String) {}
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
