public import KeygatePolicy

/// Keeps a second copy of where an audit trail stands (its genesis, last sequence number and
/// hash: an ``AuditHead``) outside the trail, in the item store's database. A trail that
/// vanished (deleted together with its head), was restarted (a fresh genesis) or was cut back
/// with a matching head no longer reaches its anchor, and is refused instead of verifying
/// intact.
///
/// Duties of a conforming type: return the anchor last saved for `trail` (nil when none was);
/// save it before returning, so that it survives the process being killed (a power loss may
/// take it back to an earlier save: it then lags). The sink saves an anchor only after the records it
/// covers are durable, so an anchor may lag its trail (a crash between the two) but never
/// leads it: a crash is never reported as tampering.
public protocol AuditAnchorStore: Sendable {
    /// The anchor saved for the trail at `trail`, or nil.
    func auditAnchor(for trail: String) throws(KeygateError) -> AuditHead?
    /// Saves `head` as the anchor of the trail at `trail`.
    func saveAuditAnchor(_ head: AuditHead, for trail: String) throws(KeygateError)
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
