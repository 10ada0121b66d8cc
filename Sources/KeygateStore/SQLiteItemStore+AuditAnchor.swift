public import KeygateAudit
public import KeygatePolicy
import Synchronization

/// The store keeps the anchor of each audit trail that audits it (by the trail's path) in its
/// `metadata` table, so a trail deleted with its head, or restarted, no longer verifies. An
/// anchor offered (``offerAuditAnchor(_:for:)``) is written by the next item write's own
/// transaction (`insert`, `replace`, `delete`), so a durable add or delete keeps the anchor at
/// its trail's head without a transaction of its own.
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
            // An older offer must not take the anchor back with a later item write.
            offeredAnchors.withLock { _ = $0.removeValue(forKey: trail) }
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

    /// Keeps `head` to be written as the anchor of `trail` by the next item write (replacing an
    /// earlier offer); writes nothing now.
    public func offerAuditAnchor(_ head: AuditHead, for trail: String) {
        offeredAnchors.withLock { $0[trail] = head }
    }

    /// Writes the anchors offered so far, in the write transaction `connection` has open.
    /// - Returns: what was written, for ``forgetWrittenAnchors(_:)`` once it is committed.
    func writeOfferedAnchors(_ connection: SQLiteConnection) throws(KeygateError) -> [String: AuditHead] {
        let offered = offeredAnchors.withLock { $0 }
        for (trail, head) in offered {
            try connection.statement(.saveAnchor, "INSERT OR REPLACE INTO metadata (name, value) VALUES (?, ?)").run([
                .text(Self.anchorName(trail)), .text(head.line),
            ])
        }
        return offered
    }

    /// Forgets the offers `written` committed (not ones made since).
    func forgetWrittenAnchors(_ written: [String: AuditHead]) {
        guard !written.isEmpty else { return }
        offeredAnchors.withLock { offered in
            for (trail, head) in written where offered[trail] == head { offered[trail] = nil }
        }
    }
}
