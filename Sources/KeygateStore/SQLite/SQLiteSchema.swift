import KeygatePolicy

/// The database schema as ordered forward migrations; `PRAGMA user_version` records how
/// many have run. Each runs in the same transaction as the version bump.
enum SQLiteSchema {
    /// Each with the tables and indexes (not SQLite's own) it creates, as "type name": what a
    /// database at that version holds (``refuseForeign(_:)``).
    static let migrations: [(name: String, sql: String, creates: Set<String>)] = [
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
            """,
            ["table items", "index items_primary_key"]
        ),
        (
            "v2: store metadata (the key-check value, audit trail anchors)",
            """
            CREATE TABLE metadata (
                name  TEXT PRIMARY KEY,
                value BLOB NOT NULL
            );
            """,
            ["table metadata"]
        ),
        (
            "v3: key items (spec §9.4), their keeper blobs sealed like values",
            """
            CREATE TABLE keys (
                id    INTEGER PRIMARY KEY AUTOINCREMENT,
                agrp  TEXT    NOT NULL,
                labl  TEXT,
                atag  BLOB    NOT NULL,
                klbl  BLOB    NOT NULL,
                type  TEXT    NOT NULL,
                tkid  TEXT    NOT NULL,
                impt  INTEGER NOT NULL CHECK (impt IN (0, 1)),
                pubk  BLOB    NOT NULL,
                pdmn  TEXT    NOT NULL,
                accc  TEXT    NOT NULL,
                cdat  INTEGER NOT NULL,
                mdat  INTEGER NOT NULL,
                nonce BLOB    NOT NULL,
                value BLOB    NOT NULL
            );
            CREATE UNIQUE INDEX keys_primary_key ON keys (agrp, klbl, atag, type, tkid);
            """,
            ["table keys", "index keys_primary_key"]
        ),
    ]

    /// Refuses a database that is not a Keygate store before anything in it changes (its journal
    /// mode included): its version must be one this Keygate's migrations reach, and its tables
    /// and indexes exactly those the migrations up to that version create. An empty database
    /// (version 0, no tables) is a new store.
    /// - Returns: its schema version.
    /// - Throws: `errSecNotAvailable` naming the file, with ``KeygatePolicy/KeygateError/Condition/newerSchema``
    ///   or ``KeygatePolicy/KeygateError/Condition/foreignDatabase``.
    static func refuseForeign(_ connection: SQLiteConnection) throws(KeygateError) -> Int {
        // One read transaction for the version and the tables: another process creating the
        // store meanwhile commits its tables and its version together, and both are seen, or
        // neither (two reads could see the version before its commit and the tables after).
        try connection.transaction(immediate: false) { () throws(KeygateError) -> Int in
            try readAndCheck(connection)
        }
    }

    private static func readAndCheck(_ connection: SQLiteConnection) throws(KeygateError) -> Int {
        let probe = try connection.statement("PRAGMA user_version")
        _ = try probe.step()
        let version = Int(probe.integer(0))
        probe.reset()
        guard version >= 0 else { throw foreign(connection, "its schema version is \(version)") }
        try refuseNewer(version, connection)
        let list = try connection.statement(
            "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
        defer { list.reset() }
        var found = Set<String>()
        while try list.step() { found.insert((list.text(0) ?? "") + " " + (list.text(1) ?? "")) }
        let expected = migrations.prefix(version).reduce(into: Set<String>()) { $0.formUnion($1.creates) }
        guard found == expected else {
            let unexpected = found.subtracting(expected).sorted().prefix(3)
            let missing = expected.subtracting(found).sorted().prefix(3)
            let what =
                unexpected.isEmpty
                ? "its schema version \(version) lacks \(missing.joined(separator: ", "))"
                : "it has \(unexpected.joined(separator: ", ")) at schema version \(version)"
            throw foreign(connection, what)
        }
        return version
    }

    private static func foreign(_ connection: SQLiteConnection, _ what: String) -> KeygateError {
        KeygateError(
            .notAvailable,
            "\(connection.path) is not a Keygate store (\(what)); it was not changed: name another store file",
            condition: .foreignDatabase)
    }

    private static func refuseNewer(_ version: Int, _ connection: SQLiteConnection) throws(KeygateError) {
        guard version <= migrations.count else {
            throw KeygateError(
                .notAvailable,
                "\(connection.path) has schema version \(version), newer than this Keygate knows (\(migrations.count))",
                condition: .newerSchema)
        }
    }

    /// Brings the database up to the latest version; `current` is the version read without a
    /// write lock (``refuseForeign(_:)``'s): most opens need no migration, and the version is
    /// read again under the lock before one runs.
    static func migrate(_ connection: SQLiteConnection, current: Int) throws(KeygateError) {
        guard current != migrations.count else { return }
        try connection.transaction { () throws(KeygateError) in
            let statement = try connection.statement("PRAGMA user_version")
            _ = try statement.step()
            let version = Int(statement.integer(0))
            statement.reset()
            try refuseNewer(version, connection)
            for index in version..<migrations.count {
                try connection.execute(migrations[index].sql)
                try connection.execute("PRAGMA user_version = \(index + 1)")
            }
        }
    }
}
