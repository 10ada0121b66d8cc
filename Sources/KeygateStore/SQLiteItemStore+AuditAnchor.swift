public import KeygateAudit
public import KeygatePolicy
import Synchronization

/// The store keeps the anchor of each audit trail that audits it (by the trail's path) in its
/// `metadata` table, so a trail deleted with its head, or restarted, no longer verifies.
extension SQLiteItemStore: AuditAnchorStore {
    private static func anchorName(_ trail: String) -> String { "audit.anchor:" + trail }

    /// The anchor saved for the trail at `trail`, or nil.
    /// - Throws: `errSecDecode` when the saved anchor is damaged.
    public func auditAnchor(for trail: String) throws(KeygateError) -> AuditHead? {
        let text = try connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) -> String? in
            let statement = try connection.statement("SELECT value FROM metadata WHERE name = ?")
            defer { statement.reset() }
            try statement.bind([.text(Self.anchorName(trail))])
            return try statement.step() ? statement.text(0) ?? "" : nil
        }
        guard let text else { return nil }
        do {
            return try AuditHead(line: text, file: path + " (audit anchor of \(trail))")
        } catch {
            throw KeygateError(.decode, "the audit anchor of \(trail) in \(path) is damaged: \(error)")
        }
    }

    /// Saves `head` as the anchor of the trail at `trail`, in one transaction.
    ///
    /// The transaction is committed with `synchronous = NORMAL` (the WAL is written, not
    /// `fsync`ed), then the connection goes back to `FULL` for item writes: the anchor survives
    /// `kill -9` at once, and a power loss at worst takes it back to an earlier save (it lags,
    /// which is never tampering), so it costs no second `fsync` per flush of the trail. The next
    /// item write (or checkpoint) makes it durable with its own `fsync`.
    public func saveAuditAnchor(_ head: AuditHead, for trail: String) throws(KeygateError) {
        try connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) in
            try connection.execute("PRAGMA synchronous = NORMAL")
            do throws(KeygateError) {
                try connection.transaction { () throws(KeygateError) in
                    try connection.statement("INSERT OR REPLACE INTO metadata (name, value) VALUES (?, ?)").run([
                        .text(Self.anchorName(trail)), .text(head.line),
                    ])
                }
            } catch {
                try connection.execute("PRAGMA synchronous = FULL")
                throw error
            }
            try connection.execute("PRAGMA synchronous = FULL")
        }
    }
}
