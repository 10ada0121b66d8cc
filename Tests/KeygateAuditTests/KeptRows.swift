import KeygateAudit
import KeygateItems
import KeygatePolicy

@testable import KeygateAudit

/// What a store keeps of a trail, read the way the sink reads it (``AuditAnchorKeeper``), for
/// tests that look at the rows a store holds.
extension MetadataStore {
    func heldAuditRecords(for trail: String) throws(KeygateError) -> [HeldAuditRecord] {
        try AuditAnchorKeeper(store: self, trail: trail).heldRecords()
    }

    func heldAuditRecordExtent(for trail: String) throws(KeygateError) -> AuditAnchorKeeper.Kept {
        try AuditAnchorKeeper(store: self, trail: trail).kept()
    }

    func auditAnchor(for trail: String) throws(KeygateError) -> AuditHead? {
        try AuditAnchorKeeper(store: self, trail: trail).anchor()
    }

    /// Writes `offer`'s rows for `trail` in a transaction of their own, as a sink's save does.
    func writeAuditOffer(_ offer: AuditOffer, for trail: String) throws(KeygateError) {
        try AuditAnchorKeeper(store: self, trail: trail).save(offer)
    }

    func saveAuditAnchor(_ head: AuditHead, for trail: String) throws(KeygateError) {
        try writeAuditOffer(AuditOffer(anchor: head), for: trail)
    }
}
