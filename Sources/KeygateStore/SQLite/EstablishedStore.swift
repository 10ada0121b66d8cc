import KeygatePolicy

/// What an open needs to know of a store that is already set up, read in one read transaction.
///
/// An open asks one read transaction, not one per question (the journal mode, the schema
/// version, the key-check value), since each takes and releases the WAL's read lock (two
/// `fcntl`s and an `fstat` or two; the `keygate get` rows of `make bench` measure it). A store
/// this Keygate made already has all of it, so one deferred transaction reads it; anything else (a new or older file, a
/// journal mode other than WAL, no key-check value yet) is reported as `nil` and the open takes
/// its full path, which sets up, migrates and writes what is missing. Whether it holds items is
/// not asked: a store with a key-check value has something sealed under its key either way.
struct EstablishedStore {
    /// The stored key-check value (``KeyCheck``).
    let keyCheck: [UInt8]

    /// Reads the schema version, the journal mode and the key-check value in one read
    /// transaction (`BEGIN` deferred: it takes no write lock).
    /// - Returns: `nil` unless the schema is this Keygate's latest, the journal mode is WAL and
    ///   a key-check value is stored. Nothing is written.
    static func read(_ connection: SQLiteConnection) throws(KeygateError) -> EstablishedStore? {
        try connection.transaction(immediate: false) { () throws(KeygateError) in try readInTransaction(connection) }
    }

    private static func readInTransaction(_ connection: SQLiteConnection) throws(KeygateError) -> EstablishedStore? {
        // The version first: its read starts the transaction, and with it SQLite finds the WAL,
        // so the journal-mode query below answers for the file, not a default.
        let version = try connection.statement("PRAGMA user_version")
        defer { version.reset() }
        guard try version.step(), Int(version.integer(0)) == SQLiteSchema.migrations.count else { return nil }
        let mode = try connection.statement("PRAGMA journal_mode")
        defer { mode.reset() }
        guard try mode.step(), mode.text(0) == "wal" else { return nil }
        guard let keyCheck = try KeyCheck.stored(on: connection) else { return nil }
        return EstablishedStore(keyCheck: keyCheck)
    }

    /// Whether the store holds any item or key (one read of each table's first row).
    static func hasItems(_ connection: SQLiteConnection) throws(KeygateError) -> Bool {
        let exists = try connection.statement("SELECT EXISTS (SELECT 1 FROM items) OR EXISTS (SELECT 1 FROM keys)")
        defer { exists.reset() }
        _ = try exists.step()
        return exists.integer(0) != 0
    }
}
