import KeygatePolicy
import Synchronization

// The anchor: where the trail stands, kept in the item store (``AuditAnchorKeeper``). It
// follows the durable trail at a cadence: saved in a transaction of its own when due
// (``anchorDue(_:state:)``), otherwise offered to the next item write a call of this trail makes.

extension JSONLinesAuditSink {
    /// Whether a durable `head` is worth an anchor transaction of its own: the store holds no
    /// anchor for the trail (or one of another genesis), or `head` is ``anchorInterval`` or more
    /// records past it.
    func anchorDue(_ head: AuditHead, state: State) -> Bool {
        guard keeper != nil else { return false }
        guard let saved = state.anchor, saved.genesis == head.genesis else { return true }
        return head.sequence >= saved.sequence &+ UInt64(anchorInterval)
    }

    /// Offers `head` (durable in the trail) as the anchor for the next item write, in place of
    /// an earlier offer.
    func offerAnchor(_ head: AuditHead) {
        guard keeper != nil else { return }
        shared.offer.withLock { $0.anchor = head }
    }

    /// Saves `head` (durable in the trail) as the anchor, in a transaction of its own.
    func saveAnchor(_ head: AuditHead) throws(KeygateError) {
        try Self.saveAnchor(head, keeper: keeper, shared: shared)
    }

    /// Saves `head` as the anchor through `keeper`, with the release `shared` offers riding along
    /// (a restarted trail lets its old held records go here); an older anchor offered must not
    /// take it back with a later item write, so the offer's is dropped.
    static func saveAnchor(_ head: AuditHead, keeper: AuditAnchorKeeper?, shared: Shared) throws(KeygateError) {
        guard let keeper else { return }
        let saving = shared.offer.withLock { offer in
            offer.anchor = nil
            return AuditOffer(anchor: head, release: offer.release)
        }
        try keeper.save(saving)
        shared.offer.withLock { $0.forget(AuditOffer(release: saving.release)) }
    }
}
