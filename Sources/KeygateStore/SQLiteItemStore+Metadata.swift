public import KeygateItems
public import KeygatePolicy
import Synchronization

/// The store's named rows are the `metadata` table (name, value), beside the items: read in one
/// read transaction (``readMetadata(_:)``), written in a transaction of their own
/// (``writeMetadata(_:)``) or by a ``KeygateItems/TransactionParticipant`` in an item write's own
/// transaction (``itemTransaction(_:joining:_:)``), at no extra commit.
extension SQLiteItemStore: MetadataStore {
    /// Runs `body` under the store's lock in one read transaction (`BEGIN` deferred: no write
    /// lock): what it reads is of one commit, even while other processes write.
    public func readMetadata<T: Sendable>(_ body: (any MetadataReading) throws(KeygateError) -> T) throws(KeygateError)
        -> T
    {
        try connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) -> T in
            let reading = SQLiteMetadataReading(connection: connection)
            return try connection.transaction(immediate: false) { () throws(KeygateError) -> T in try body(reading) }
        }
    }

    /// Applies `changes` in one transaction of its own, committed with `synchronous = NORMAL`
    /// (the WAL is written, not `fsync`ed), then the connection goes back to `FULL` for item
    /// writes: the changes survive `kill -9` at once, and a power loss at worst takes them back
    /// to an earlier commit; the next item write (or checkpoint) makes them durable with its own
    /// `fsync`. So a row kept beside the items costs no `fsync` of its own.
    public func writeMetadata(_ changes: [MetadataChange]) throws(KeygateError) {
        guard !changes.isEmpty else { return }
        try connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) in
            try connection.execute("PRAGMA synchronous = NORMAL")
            do throws(KeygateError) {
                try connection.transaction { () throws(KeygateError) in try Self.apply(changes, connection) }
            } catch {
                try connection.execute("PRAGMA synchronous = FULL")
                throw error
            }
            try connection.execute("PRAGMA synchronous = FULL")
        }
    }

    /// Runs `body` in a write transaction of `connection` (an item write), then writes what
    /// `participant` adds to it, and tells the participant how the transaction ended.
    func itemTransaction<T>(
        _ connection: SQLiteConnection, joining participant: (any TransactionParticipant)?,
        _ body: () throws(KeygateError) -> T
    ) throws(KeygateError) -> T {
        guard let participant else { return try connection.transaction(body) }
        var asked = false
        do throws(KeygateError) {
            let result = try connection.transaction { () throws(KeygateError) -> T in
                let result = try body()
                asked = true
                try Self.apply(participant.willCommit(into: self), connection)
                return result
            }
            if asked { participant.didCommit() }
            return result
        } catch {
            if asked { participant.didRollBack() }
            throw error
        }
    }

    /// Sets a `metadata` row's value, or raises it when the row holds an earlier one.
    private static let raise =
        "INSERT INTO metadata (name, value) VALUES (?, ?) "
        + "ON CONFLICT (name) DO UPDATE SET value = excluded.value WHERE excluded.value > value"

    /// Applies `changes` in the transaction `connection` has open. A raise overwrites a row in
    /// place (an upsert keeps its row id): rows that are raised again and again neither grow
    /// nor shrink the table.
    static func apply(_ changes: [MetadataChange], _ connection: SQLiteConnection) throws(KeygateError) {
        for change in changes {
            switch change {
            case .set(let name, let value):
                try connection.statement(.setMetadata, "INSERT OR REPLACE INTO metadata (name, value) VALUES (?, ?)")
                    .run([.text(name), .text(value)])
            case .raise(let name, let value):
                let statement = try connection.statement(.raiseMetadata, raise)
                statement.reset()
                try statement.run([.text(name), .text(value)])
            case .deleteRange(let from, let through):
                try connection.statement("DELETE FROM metadata WHERE name >= ? AND name <= ?").run([
                    .text(from), .text(through),
                ])
            }
        }
    }
}

/// The `metadata` rows as the read transaction open on `connection` sees them.
struct SQLiteMetadataReading: MetadataReading {
    let connection: SQLiteConnection

    func value(of name: String) throws(KeygateError) -> String? {
        let statement = try connection.statement("SELECT value FROM metadata WHERE name = ?")
        defer { statement.reset() }
        try statement.bind([.text(name)])
        return try statement.step() ? statement.text(0) ?? "" : nil
    }

    func extent(from: String, before: String, valuesAbove above: String) throws(KeygateError) -> (
        count: Int, greatest: String?
    ) {
        let statement = try connection.statement(
            "SELECT count(*), max(value) FROM metadata WHERE name >= ? AND name < ? AND value > ?")
        defer { statement.reset() }
        try statement.bind([.text(from), .text(before), .text(above)])
        guard try statement.step(), statement.integer(0) > 0 else { return (0, nil) }
        return (Int(statement.integer(0)), statement.text(1))
    }

    func values(from: String, before: String, valuesAbove above: String) throws(KeygateError) -> [String] {
        let statement = try connection.statement(
            "SELECT value FROM metadata WHERE name >= ? AND name < ? AND value > ? ORDER BY value")
        defer { statement.reset() }
        try statement.bind([.text(from), .text(before), .text(above)])
        var values: [String] = []
        while try statement.step() { values.append(statement.text(0) ?? "") }
        return values
    }
}
