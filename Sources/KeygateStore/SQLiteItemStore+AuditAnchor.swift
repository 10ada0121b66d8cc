public import KeygateAudit
public import KeygatePolicy
import Synchronization

/// The store keeps the anchor of each audit trail that audits it (by the trail's path) in its
/// `metadata` table, so a trail deleted with its head, or restarted, no longer verifies. An
/// anchor offered (``offerAuditAnchor(_:for:)``) is written by the next item write's own
/// transaction (`insert`, `replace`, `delete`), so a durable add or delete keeps the anchor at
/// its trail's head without a transaction of its own. So are the audit records a trail holds
/// here (``holdAuditRecords(_:head:for:)``, a ring of `audit.held:…` rows of `metadata`): the item and the record
/// of its decision are made durable by one commit.
extension SQLiteItemStore: AuditAnchorStore {
    static func anchorName(_ trail: String) -> String { "audit.anchor:" + trail }

    /// The anchor saved for the trail at `trail`, or nil; when the store holds records of the
    /// trail past it (``holdAuditRecords(_:head:for:)``), the head at the last of them: they
    /// were committed with their items, in place of the anchor row.
    /// Both are read in one read transaction, so they are of one commit.
    /// - Throws: `errSecDecode` when the saved anchor is damaged.
    public func auditAnchor(for trail: String) throws(KeygateError) -> AuditHead? {
        let (text, held) = try readTransaction { (connection) throws(KeygateError) -> (String?, HeldAuditRecord?) in
            (try Self.anchorText(of: trail, connection), try heldExtent(of: trail, connection).last)
        }
        return try anchor(text, held: held, of: trail)
    }

    /// The anchor row's text for `trail`, nil when there is none.
    static func anchorText(of trail: String, _ connection: SQLiteConnection) throws(KeygateError) -> String? {
        let statement = try connection.statement("SELECT value FROM metadata WHERE name = ?")
        defer { statement.reset() }
        try statement.bind([.text(anchorName(trail))])
        return try statement.step() ? statement.text(0) ?? "" : nil
    }

    /// The anchor the saved row `text` and the last `held` record past it make: the head at
    /// that record, or the saved anchor; nil without a saved row.
    /// - Throws: `errSecDecode` when the saved anchor is damaged.
    func anchor(_ text: String?, held: HeldAuditRecord?, of trail: String) throws(KeygateError) -> AuditHead? {
        guard let text else { return nil }
        let saved: AuditHead
        do {
            saved = try AuditHead(line: text, file: path + " (audit anchor of \(trail))")
        } catch {
            throw KeygateError(.decode, "the audit anchor of \(trail) in \(path) is damaged: \(error)")
        }
        guard let held, held.sequence > saved.sequence else { return saved }
        return AuditHead(genesis: saved.genesis, sequence: held.sequence, hash: held.hash)
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
            auditOffers.withLock { _ = $0.anchors.removeValue(forKey: trail) }
            try connection.execute("PRAGMA synchronous = NORMAL")
            // Releases of held records ride along (a restarted trail lets its old ones go here).
            let releases = auditOffers.withLock { AuditOffers(releases: $0.releases) }
            do throws(KeygateError) {
                try connection.transaction { () throws(KeygateError) in
                    try Self.writeAnchor(head, for: trail, connection)
                    if !releases.isEmpty { try Self.write(releases, connection) }
                }
                if !releases.isEmpty { auditOffers.withLock { $0.forget(releases) } }
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
        auditOffers.withLock { $0.anchors[trail] = head }
    }

    /// Runs `body` under the store's lock in one read transaction of its connection (`BEGIN`
    /// deferred: no write lock): what it reads is of one commit, even while other processes write.
    func readTransaction<T: Sendable>(_ body: (SQLiteConnection) throws(KeygateError) -> T) throws(KeygateError) -> T {
        try connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) -> T in
            try connection.transaction(immediate: false) { () throws(KeygateError) -> T in try body(connection) }
        }
    }

    /// Runs `body` in a write transaction of `connection` (an item write) that also writes
    /// what trails offered so far (releases of held records, held records, anchors), at no
    /// extra commit; once it is committed they are forgotten (not ones offered since).
    func itemTransaction<T>(
        _ connection: SQLiteConnection, _ body: () throws(KeygateError) -> T
    ) throws(KeygateError) -> T {
        var written = AuditOffers()
        let result = try connection.transaction { () throws(KeygateError) -> T in
            let result = try body()
            written = auditOffers.withLock { $0 }
            guard !written.isEmpty else { return result }
            try Self.write(written, connection)
            return result
        }
        guard !written.isEmpty else { return result }
        auditOffers.withLock { $0.forget(written) }
        return result
    }

    /// Writes `head` as the anchor of `trail`, in the transaction `connection` has open.
    static func writeAnchor(
        _ head: AuditHead, for trail: String, _ connection: SQLiteConnection
    ) throws(KeygateError) {
        try connection.statement(.saveAnchor, "INSERT OR REPLACE INTO metadata (name, value) VALUES (?, ?)").run([
            .text(anchorName(trail)), .text(head.line),
        ])
    }
}
