/// What ``JSONLinesAuditSink/repair(at:restartingAnchor:)`` (or an append that recovered first) did.
public struct AuditRepair: Hashable, Sendable {
    /// The sequence number the head was at.
    public let staleHead: UInt64
    /// How many records past it the head was moved over.
    public let recovered: UInt64
    /// The sequence number of the ``AuditEvent/Kind/recover`` record that says so.
    public let record: UInt64

    /// The length of a partial last line (a crash during a write) that was cut off, or 0.
    public let tornBytes: Int

    /// Whether the store's anchor was replaced by this trail's head (`restartingAnchor`).
    public let anchorRestarted: Bool

    /// How many records the item store held past the trail's end (lost from the trail with a
    /// power loss) were written back, or 0.
    public let restored: UInt64

    /// A repair report.
    public init(
        staleHead: UInt64, recovered: UInt64, record: UInt64, tornBytes: Int = 0, anchorRestarted: Bool = false,
        restored: UInt64 = 0
    ) {
        self.staleHead = staleHead
        self.recovered = recovered
        self.record = record
        self.tornBytes = tornBytes
        self.anchorRestarted = anchorRestarted
        self.restored = restored
    }
}
