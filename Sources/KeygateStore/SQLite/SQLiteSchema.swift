import KeygatePolicy

/// The database schema as ordered forward migrations; `PRAGMA user_version` records how
/// many have run. Each runs in the same transaction as the version bump.
enum SQLiteSchema {
    static let migrations: [(name: String, sql: String)] = [
        (
            "v1: items with a unique primary key",
            """
            CREATE TABLE items (
                id    INTEGER PRIMARY KEY AUTOINCREMENT,
                agrp  TEXT    NOT NULL,
                acct  TEXT    NOT NULL,
                svce  TEXT    NOT NULL,
                sync  INTEGER NOT NULL CHECK (sync IN (0, 1)),
                labl  TEXT,
                gena  BLOB,
                pdmn  TEXT    NOT NULL,
                accc  TEXT    NOT NULL,
                cdat  INTEGER NOT NULL,
                mdat  INTEGER NOT NULL,
                nonce BLOB    NOT NULL,
                value BLOB    NOT NULL
            );
            CREATE UNIQUE INDEX items_primary_key ON items (agrp, acct, svce, sync);
            """
        ),
        (
            "v2: store metadata (the key-check value, audit trail anchors)",
            """
            CREATE TABLE metadata (
                name  TEXT PRIMARY KEY,
                value BLOB NOT NULL
            );
            """
        ),
    ]

    /// Brings the database up to the latest version.
    static func migrate(_ connection: SQLiteConnection) throws(KeygateError) {
        // Read the version without a write lock; most opens need no migration.
        let probe = try connection.statement("PRAGMA user_version")
        _ = try probe.step()
        let current = Int(probe.integer(0))
        probe.reset()
        guard current != migrations.count else { return }
        try connection.transaction { () throws(KeygateError) in
            let statement = try connection.statement("PRAGMA user_version")
            _ = try statement.step()
            let version = Int(statement.integer(0))
            statement.reset()
            guard version <= migrations.count else {
                throw KeygateError(
                    .notAvailable,
                    "\(connection.path) has schema version \(version), newer than this Keygate knows (\(migrations.count))",
                    condition: .newerSchema)
            }
            for index in version..<migrations.count {
                try connection.execute(migrations[index].sql)
                try connection.execute("PRAGMA user_version = \(index + 1)")
            }
        }
    }
}
