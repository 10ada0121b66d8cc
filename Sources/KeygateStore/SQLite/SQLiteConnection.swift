internal import CSQLite
import Glibc
import KeygatePolicy

/// One SQLite connection, owned by this object and closed in `deinit`. Not thread-safe:
/// ``SQLiteItemStore`` serialises all use behind one lock.
final class SQLiteConnection {
    private let handle: OpaquePointer
    let path: String
    /// The other cached statements, found by comparing keys in turn: a connection keeps a few
    /// dozen at most, and a list instead of a dictionary spares every process the run-time
    /// lookup of `StatementKey: Hashable` (a scan of all the executable's conformances).
    private var statements: [(key: StatementKey, statement: SQLiteStatement)] = []
    /// The searches of one access group, by their shape's condition bits: found by index, not
    /// by hashing a key (the read path's statement).
    private var singleGroupSearches = [SQLiteStatement?](repeating: nil, count: 1 << SearchShape.bitCount)
    /// Whether the `-wal` and `-shm` files stay when this connection is the last to close
    /// (``keepWALFiles()``).
    private var keepsWALFiles = false

    /// Set once, before the process's first connection (`keygate_sqlite_configure`): SQLite's
    /// page cache allocates pages as they are first used instead of 20 at once on a connection's
    /// first read (page faults on memory a short `keygate` command never uses), and SQLite keeps
    /// no memory statistics (a global mutex and a `malloc_usable_size` on every allocation and
    /// free: about 0.1 M of the 1.6 M instructions of a `keygate get`). False when SQLite was
    /// already initialised (another part of the process opened a database first): then its
    /// defaults stand.
    private static let configured: Bool = keygate_sqlite_configure() == SQLITE_OK

    /// Opens an existing database file (the store creates it first, with its permissions).
    init(path: String, busyTimeoutMilliseconds: Int32) throws(KeygateError) {
        _ = Self.configured
        var opened: OpaquePointer?
        let code = sqlite3_open_v2(path, &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let opened { sqlite3_close_v2(opened) }
            throw SQLiteConnection.error(code: code, message: message, path: path)
        }
        handle = opened
        self.path = path
        // Both only fail for a bad handle or argument, which would be a bug here.
        let extended = sqlite3_extended_result_codes(handle, 1)
        guard extended == SQLITE_OK else { throw error(extended) }
        let timeout = sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
        guard timeout == SQLITE_OK else { throw error(timeout) }
    }

    deinit {
        statements.removeAll()
        singleGroupSearches.removeAll()
        // The kept WAL is emptied (truncated to 0 bytes) by the close's checkpoint, as deleting
        // it did: a WAL that outlives its store's last connection is one a crash left. Best
        // effort: without it the WAL keeps its length, and is reused as before.
        if keepsWALFiles { sqlite3_exec(handle, "PRAGMA journal_size_limit = 0", nil, nil, nil) }
        // close_v2 defers the close until the last statement is finalized and cannot fail for a
        // valid handle; a failure would be a bug (a statement leaked past its connection).
        let code = sqlite3_close_v2(handle)
        assert(code == SQLITE_OK, "sqlite3_close_v2 failed: \(code)")
    }

    /// Keeps the database's `-wal` and `-shm` files when the last connection closes
    /// (`SQLITE_FCNTL_PERSIST_WAL`) instead of deleting them, the WAL emptied: the next process
    /// opens them instead of creating both files and deleting them again at its exit (two
    /// file creations and two unlinks in every `keygate` command that opens the store).
    func keepWALFiles() {
        var on: Int32 = 1
        keepsWALFiles = sqlite3_file_control(handle, "main", SQLITE_FCNTL_PERSIST_WAL, &on) == SQLITE_OK
    }

    /// Runs SQL with no results (several statements allowed).
    ///
    /// A plain `SQLITE_BUSY` here means SQLite gave up without waiting (it skips the busy
    /// handler where waiting could deadlock, as when processes open a new store together and
    /// switch it to WAL): the statement is tried again a few times, for at most about 5 s, since
    /// nothing was done. Other errors, and a busy that outlasts that, are thrown.
    func execute(_ sql: String) throws(KeygateError) {
        var code = sqlite3_exec(handle, sql, nil, nil, nil)
        var attempt: UInt32 = 0
        while code == SQLITE_BUSY && attempt < 50 {
            attempt += 1
            usleep(min(attempt, 10) * 10_000)
            code = sqlite3_exec(handle, sql, nil, nil, nil)
        }
        guard code == SQLITE_OK else { throw error(code) }
    }

    /// A cached prepared statement for `sql`, reset and with its bindings cleared (for
    /// statements run once or seldom: the text is the cache key).
    func statement(_ sql: String) throws(KeygateError) -> SQLiteStatement {
        try statement(.text(sql), sql)
    }

    /// The cached prepared statement for `key`, reset and with its bindings cleared; `sql` is
    /// built and compiled only the first time (the hot paths name their statements by a key,
    /// so no SQL text is built or hashed per call).
    func statement(_ key: StatementKey, _ sql: @autoclosure () -> String) throws(KeygateError) -> SQLiteStatement {
        var slot: Int?
        if case .search(let conditions, groups: 1) = key { slot = Int(conditions) }
        if let cached = slot.map({ singleGroupSearches[$0] }) ?? statements.first(where: { $0.key == key })?.statement {
            cached.reset()
            return cached
        }
        var prepared: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql(), -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil)
        guard code == SQLITE_OK, let prepared else { throw error(code) }
        let statement = SQLiteStatement(handle: prepared, connection: self)
        if let slot { singleGroupSearches[slot] = statement } else { statements.append((key, statement)) }
        return statement
    }

    /// Runs `body` in a transaction: commits on success, rolls back on error. Immediate (it
    /// takes the write lock at once) unless `immediate` is false (a deferred `BEGIN`: reads
    /// take no write lock).
    func transaction<T>(immediate: Bool = true, _ body: () throws(KeygateError) -> T) throws(KeygateError) -> T {
        try execute(immediate ? "BEGIN IMMEDIATE" : "BEGIN")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            if sqlite3_get_autocommit(handle) == 0 {
                do {
                    try execute("ROLLBACK")
                } catch let rollback {
                    throw KeygateError(
                        rollback.status, "\(error.message); and the rollback failed: \(rollback.message)")
                }
            }
            throw error
        }
    }

    /// The rowid of the last insert.
    var lastInsertID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// The error for a result code, with SQLite's message.
    func error(_ code: Int32) -> KeygateError {
        SQLiteConnection.error(code: code, message: String(cString: sqlite3_errmsg(handle)), path: path)
    }

    /// Maps SQLite result codes to statuses as Apple's securityd does (spec §6.1 last row); the
    /// error keeps the extended code as its cause.
    static func error(code: Int32, message: String, path: String) -> KeygateError {
        let status: KeygateStatus =
            switch code & 0xff {
            case SQLITE_CONSTRAINT: .duplicateItem
            case SQLITE_READONLY: .readOnly
            case SQLITE_NOMEM: .allocate
            case SQLITE_IOERR: .io
            case SQLITE_MISMATCH: .noSuchAttr
            default: .notAvailable
            }
        let hint = code & 0xff == SQLITE_NOTADB ? " (not a Keygate database, or damaged; the file was not changed)" : ""
        return KeygateError(
            status, "SQLite error \(code) on \(path): \(message)\(hint)",
            cause: .sqlite(SQLiteResultCode(rawValue: code)))
    }
}

/// What a cached statement is found by: its text for statements run seldom, or a name (and
/// the shape of its conditions) for the ones run on every read and write.
enum StatementKey: Equatable {
    /// A statement cached by its SQL text.
    case text(String)
    /// The item search: which optional conditions it has (a bit each) and how many access groups.
    case search(conditions: UInt8, groups: Int)
    /// The item insert.
    case insert
    /// The nonce of one item, for the lost-update check.
    case currentNonce
    /// Moving a row out of the primary key's way during a replace.
    case park
    /// The item update.
    case update
    /// The item delete.
    case delete
    /// Setting a `metadata` row (a participant's change, in an item write's transaction).
    case setMetadata
    /// Raising a `metadata` row to a later value (a participant's change, in an item write's
    /// transaction).
    case raiseMetadata
}

/// A prepared statement, finalized in `deinit`.
final class SQLiteStatement {
    private let handle: OpaquePointer
    private unowned let connection: SQLiteConnection
    /// Texts bound since the last reset, copied here once and bound without SQLite copying
    /// them again (`SQLITE_STATIC`): they stay put until ``reset()`` clears the bindings.
    private let arena = UnsafeMutableRawBufferPointer.allocate(byteCount: 512, alignment: 8)
    private var arenaUsed = 0

    init(handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    // finalize returns the error of the last step, which step() already threw.
    deinit {
        _ = sqlite3_finalize(handle)
        arena.deallocate()
    }

    /// Ends the current run and clears the bindings. Reset returns the last step's error, which
    /// ``step()`` already threw; clearing bindings cannot fail.
    func reset() {
        _ = sqlite3_reset(handle)
        _ = sqlite3_clear_bindings(handle)
        arenaUsed = 0
    }

    /// A value to bind.
    enum Value {
        case text(String)
        case integer(Int64)
        case blob([UInt8])
        case null
    }

    /// Binds `values` to parameters 1…n.
    func bind(_ values: [Value]) throws(KeygateError) {
        for (offset, value) in values.enumerated() { try bind(value, at: Int32(offset + 1)) }
    }

    /// Binds one value to parameter `index` (1-based), without building an array.
    func bind(_ value: Value, at index: Int32) throws(KeygateError) {
        let code: Int32 =
            switch value {
            case .text(let text): bind(text: text, at: index)
            case .integer(let number): sqlite3_bind_int64(handle, index, number)
            case .blob(let bytes):
                bytes.withUnsafeBytes { raw in
                    sqlite3_bind_blob(
                        handle, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(raw.count),
                        keygate_sqlite_transient())
                }
            case .null: sqlite3_bind_null(handle, index)
            }
        guard code == SQLITE_OK else { throw connection.error(code) }
    }

    /// Binds a text with its byte length (so a text holding NUL is stored whole): copied into
    /// the statement's arena when it fits (no allocation), else copied by SQLite.
    private func bind(text: String, at index: Int32) -> Int32 {
        var text = text
        return text.withUTF8 { utf8 in
            if utf8.count <= arena.count - arenaUsed, let source = utf8.baseAddress {
                let target = arena.baseAddress! + arenaUsed
                target.copyMemory(from: source, byteCount: utf8.count)
                arenaUsed += utf8.count
                return sqlite3_bind_text(
                    handle, index, target.assumingMemoryBound(to: CChar.self), Int32(utf8.count), nil)
            }
            return sqlite3_bind_text(
                handle, index,
                UnsafeRawPointer(utf8.baseAddress ?? UnsafePointer(bitPattern: 1)!)
                    .assumingMemoryBound(to: CChar.self), Int32(utf8.count), keygate_sqlite_transient())
        }
    }

    /// Steps once: true when a row is available, false when done.
    func step() throws(KeygateError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(code)
        }
    }

    /// Runs the statement to completion.
    func run(_ values: [Value] = []) throws(KeygateError) {
        try bind(values)
        while try step() {}
    }

    /// The number of rows the last run changed.
    var changes: Int32 { sqlite3_changes(sqlite3_db_handle(handle)) }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    /// Whether the text (or blob) in `column` is exactly `bytes`, compared in place.
    func columnEquals(_ column: Int32, _ bytes: [UInt8]) -> Bool {
        guard sqlite3_column_type(handle, column) == SQLITE_TEXT else { return false }
        let base = sqlite3_column_text(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count == bytes.count else { return false }
        guard count > 0, let base else { return count == 0 }
        return bytes.withUnsafeBytes { memcmp($0.baseAddress!, base, count) == 0 }
    }

    func text(_ column: Int32) -> String? {
        guard let base = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeRawBufferPointer(start: base, count: count), as: UTF8.self)
    }

    func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func blob(_ column: Int32) -> [UInt8]? {
        guard !isNull(column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let base = sqlite3_column_blob(handle, column) else { return [] }
        // From a raw buffer: specialised for bytes, one memcpy. (`Array(unsafeUninitializedCapacity:)`
        // allocates through the standard library's unspecialised code, which looks up the array
        // storage's metadata at run time on every call: about 330 more instructions per blob.)
        return [UInt8](UnsafeRawBufferPointer(start: base, count: count))
    }
}
