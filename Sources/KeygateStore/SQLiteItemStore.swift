import Glibc
public import KeygateItems
public import KeygatePolicy
import Synchronization

/// The embedded default store: one SQLite database file, values sealed with libsodium
/// XChaCha20-Poly1305 under a key from a ``KeyProvider``.
///
/// - The file is created 0600 in a 0700 directory; WAL mode; `busy_timeout` so several
///   processes can share it; every write is one transaction; a unique index on the primary
///   key makes two racing adds end in one row and one `errSecDuplicateItem`.
/// - Each value gets a fresh random nonce, and its associated data binds the item's identity
///   and whole access control: editing the access-control columns, or swapping ciphertexts
///   between rows, makes the read fail with `errSecDecode`, never a silent downgrade.
/// - One connection per store, statements prepared once; a read is one indexed select plus
///   one AEAD open.
/// - A corrupt or foreign file fails to open with a clear error and is not changed.
/// - SQLite's settings are process-wide: when the first store of a process opens before anything
///   else in it has used SQLite, it sets SQLite's page cache to allocate pages as they are used
///   and turns SQLite's memory statistics off, so `sqlite3_memory_used` and SQLite's soft and
///   hard heap limits count nothing in that process. When SQLite was already initialised, its
///   settings stand.
public final class SQLiteItemStore: ItemStore {
    let connection: Mutex<SQLiteConnection>
    /// Each distinct stored access-control text, parsed once.
    /// Locked after ``connection`` when both are held.
    let rows = Mutex(ParsedRowCache())
    /// The sealing key, read and checked at open (wiped when the store is released).
    let sealingKey: SecretData
    /// The database file.
    public let path: String
    /// The largest value accepted, in bytes.
    public let maximumValueLength: Int

    /// `$XDG_DATA_HOME/keygate`, else `~/.local/share/keygate`.
    public static func defaultDirectory() throws(KeygateError) -> String {
        if let data = getenv("XDG_DATA_HOME").map({ String(cString: $0) }), data.hasPrefix("/") {
            return data + "/keygate"
        }
        guard let home = getenv("HOME").map({ String(cString: $0) }), home.hasPrefix("/") else {
            throw KeygateError(
                .notAvailable, "neither XDG_DATA_HOME nor HOME is set to an absolute path", condition: .noHome)
        }
        return home + "/.local/share/keygate"
    }

    /// The default database, `items.db` in ``defaultDirectory()``.
    public static func defaultPath() throws(KeygateError) -> String { try defaultDirectory() + "/items.db" }

    /// Opens (creating when needed) the database at `path`, and checks its key.
    /// - Parameters:
    ///   - path: the database file; its directory is created 0700 when missing.
    ///   - keyProvider: the sealing key; the default keeps it in `path + ".key"`.
    ///   - busyTimeoutMilliseconds: how long to wait for another process's write lock.
    ///   - maximumValueLength: the largest value ``insert(_:joining:)`` and ``replace(_:joining:)`` accept
    ///     (`errSecParam` beyond it).
    ///   - privacy: whether the directory, the database, its `-wal` and `-shm` files and the key
    ///     file must belong to the effective user and be private (``KeygateItems/FilePrivacy``).
    /// - Throws: ``KeygatePolicy/KeygateError``: `errSecNotAvailable` for a directory or file that is not
    ///   private, not the user's own or not a regular file (naming it and the fix), a corrupt or
    ///   newer database, an
    ///   unusable key, or a database that is missing or empty beside an existing key file (the
    ///   key says the store held items); `errSecDecode` for a key that is not this store's (its
    ///   key-check value does not open), refused before anything is written; `errSecIO` for I/O
    ///   errors.
    public init(
        path: String, keyProvider: (any KeyProvider)? = nil, busyTimeoutMilliseconds: Int32 = 10_000,
        privacy: FilePrivacy = .ownerOnly, maximumValueLength: Int = ItemLimits.defaultMaximumValueLength
    ) throws(KeygateError) {
        self.path = path
        self.maximumValueLength = maximumValueLength
        try Self.makeDirectories(PrivateFile.directoryName(of: path))
        try PrivateFile.checkDirectory(of: path, privacy: privacy, status: .notAvailable)
        // SQLite opens the -wal and -shm files itself: they must be ours before it does. The WAL
        // is looked at before the database: a checkpoint writes the database before it empties
        // the WAL, so a process checkpointing meanwhile cannot make a live store look empty.
        let wal = try PrivateFile.inspect(path + "-wal", privacy: privacy, status: .notAvailable)
        let database = try PrivateFile.inspect(path, privacy: privacy, status: .notAvailable)
        try PrivateFile.inspect(path + "-shm", privacy: privacy, status: .notAvailable)
        let keyFile = keyProvider == nil ? path + ".key" : (keyProvider as? KeyFileProvider)?.path
        if let keyFile, try PrivateFile.inspect(keyFile, privacy: privacy, status: .notAvailable) != nil {
            try Self.refuseLostDatabase(at: path, keyFile: keyFile, database: database, wal: wal)
        }
        // A database file that holds something was checked above (a private regular file, not
        // followed through a link): it needs no creating, so it is not opened twice.
        let created: Bool
        if let database, database.st_size > 0 {
            created = false
        } else {
            created = try Self.prepareFile(at: path, privacy: privacy)
        }
        let opened = try SQLiteConnection(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        // A store already set up (every open but its first few) is checked in one read
        // transaction; anything else takes the full path, which sets it up.
        let established = created ? nil : try EstablishedStore.read(opened)
        // Before anything is written, and after that read: SQLite refuses the setting inside a
        // transaction, and the schema it needs is then loaded already (set first, it loaded the
        // schema in a read transaction of its own: two more fcntl locks and an fstat).
        try opened.execute("PRAGMA synchronous = FULL")
        // A missing key file is created only for a store with nothing sealed under a key yet: no
        // item and no key-check value. Items or a key-check value sealed under a lost key must
        // not be joined by a new key, which the key check would refuse only after writing it.
        // An established store has its key-check value, so only the full open asks.
        var hasItems = false
        var nothingSealed = false
        if established == nil {
            hasItems = try Self.setUp(opened, created: created)
            nothingSealed = hasItems ? false : try KeyCheck.stored(on: opened) == nil
        }
        let provider =
            keyProvider ?? KeyFileProvider(path: path + ".key", createsMissingKey: nothingSealed, privacy: privacy)
        let key = try provider.key()
        if let established {
            try KeyCheck.verify(key, stored: established.keyCheck, path: path)
        } else {
            try KeyCheck.verify(key, on: opened, hasItems: hasItems)
        }
        sealingKey = key
        // Only a store that opened: a refused one (a wrong key, a corrupt file) leaves no
        // -wal or -shm file behind.
        opened.keepWALFiles()
        connection = Mutex(opened)
    }

    /// Sets up a store that is new or not yet set up by this Keygate: WAL mode, the schema's
    /// migrations. Another program's database is refused before anything in it changes.
    /// - Returns: whether the store holds at least one item.
    private static func setUp(_ opened: SQLiteConnection, created: Bool) throws(KeygateError) -> Bool {
        let version = try SQLiteSchema.refuseForeign(opened)
        try opened.execute("PRAGMA journal_mode = WAL")
        try SQLiteSchema.migrate(opened, current: version)
        // A new store's schema reaches the database file itself before its key exists, so a key
        // seldom sits beside an empty database file (best effort: other processes may hold the
        // WAL; the lost-database check also accepts an empty file beside a non-empty WAL).
        if created { try? opened.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        return try EstablishedStore.hasItems(opened)
    }

    /// Refuses a database file that is missing or empty while its key file exists: the key is
    /// made only once the database holds its schema, so the store held items and the database
    /// was lost, truncated or replaced. A new empty store in its place would hide that.
    /// `database` and `wal` are their files' `lstat`, nil when missing, the WAL's taken first.
    private static func refuseLostDatabase(at path: String, keyFile: String, database: stat?, wal: stat?)
        throws(KeygateError)
    {
        let walSize = wal?.st_size ?? 0
        let exists = database != nil
        if let database, database.st_size != 0 || walSize != 0 || database.st_mode & S_IFMT != S_IFREG { return }
        throw KeygateError(
            .notAvailable,
            "the database \(path) is \(exists ? "empty" : "missing"), but its key \(keyFile) exists, so the store "
                + "held items: restore \(path) from a backup, or move \(keyFile) away to start a new, empty store",
            condition: .lostDatabase)
    }

    /// Creates an empty file (0600) when missing and checks it (a private regular file).
    /// - Returns: whether the file is new (empty).
    private static func prepareFile(at path: String, privacy: FilePrivacy) throws(KeygateError) -> Bool {
        // O_RDWR and O_NONBLOCK: a FIFO put in its place is refused, not waited on.
        guard
            let descriptor = try PrivateFile.open(
                path, flags: O_RDWR | O_CREAT, privacy: privacy, status: .notAvailable)
        else { throw KeygateError(.io, "cannot create \(path)") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw KeygateError(.io, "cannot inspect \(path): \(String(cString: strerror(errno)))", cause: .errno(errno))
        }
        // A new file's directory entry is made durable before anything is stored in it.
        guard status.st_size != 0 || PrivateFile.syncDirectory(of: path) else {
            throw KeygateError(
                .io, "cannot flush the directory of \(path): \(String(cString: strerror(errno)))", cause: .errno(errno))
        }
        return status.st_size == 0
    }

    /// Creates the directory and its missing parents (0700); leaves existing ones. The directory
    /// itself is tried first: when it exists (every open but the first), that is one `mkdir`
    /// instead of one per component.
    private static func makeDirectories(_ directory: String) throws(KeygateError) {
        if directory.hasPrefix("/") && (mkdir(directory, 0o700) == 0 || errno == EEXIST) { return }
        var current = ""
        for part in directory.split(separator: "/", omittingEmptySubsequences: true) {
            current += "/" + String(part)  // String(Substring): not the generic append(contentsOf:)
            if mkdir(current, 0o700) != 0 && errno != EEXIST {
                let code = errno
                throw KeygateError(
                    .io, "cannot create \(current): \(String(cString: strerror(code)))", cause: .errno(code))
            }
        }
    }

    /// Runs SQL directly on the database, bypassing every check: for tests and `keygate demo`
    /// to play the attacker who edits the file.
    package func executeRawSQL(_ sql: String) throws(KeygateError) {
        try connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) in
            try connection.execute(sql)
        }
    }

    static let columns = "id, agrp, acct, svce, sync, labl, gena, pdmn, accc, cdat, mdat, nonce, value"

    /// The items matching `filter`, in the order they were added.
    ///
    /// One cached statement per shape of filter (which conditions it has, how many access
    /// groups), bound in place; the name columns the filter fixes are taken from it rather than
    /// read back; each distinct access-control text is parsed once. A point read (service and
    /// account given) finds its at most two rows per access group through the primary-key
    /// index and puts them in id order itself, so SQLite builds no sorter for it. Linear in the
    /// rows returned.
    public func items(matching filter: ItemFilter) throws(KeygateError) -> [ItemRecord] {
        guard !filter.accessGroups.isEmpty else { return [] }
        let shape = SearchShape(filter)
        let known = shape.fixedNames(filter)
        return try connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) -> [ItemRecord] in
            let statement = try connection.statement(
                .search(conditions: shape.conditions, groups: filter.accessGroups.count), shape.sql(filter))
            defer { statement.reset() }
            try shape.bind(filter, to: statement)
            return try rows.withLock { (cache: inout ParsedRowCache) throws(KeygateError) -> [ItemRecord] in
                var records: [ItemRecord] = []
                let values = shape.readsValues
                while try statement.step() {
                    records.append(try Self.record(from: statement, known: known, values: values, cache: &cache))
                }
                if !shape.isOrdered && records.count > 1 { records.sort { $0.id.rawValue < $1.id.rawValue } }
                return records
            }
        }
    }

    /// The record in the current row of `row`: a select of ``columns`` without the name columns
    /// `known` gives (the query fixed them, so their bytes are the filter's), and without the
    /// value columns unless `values` (a record without them is sealed with nothing: an empty
    /// nonce, which no stored value has, and ``open(_:)`` refuses).
    static func record(
        from row: SQLiteStatement, known: FixedNames = FixedNames(), values: Bool = true,
        cache: inout ParsedRowCache
    ) throws(KeygateError) -> ItemRecord {
        var column: Int32 = 0
        func next() -> Int32 {
            defer { column += 1 }
            return column
        }
        let id = row.integer(next())
        guard let group = known.group ?? row.text(next()), let account = known.account ?? row.text(next()),
            let service = known.service ?? row.text(next())
        else {
            throw KeygateError(
                .decode, "item #\(id) is damaged: its identity columns are missing", condition: .damagedItem)
        }
        let identity = ItemIdentity(
            accessGroup: group, account: account, service: service, synchronizable: row.integer(next()) != 0)
        let label = row.text(next())
        let generic = row.blob(next())
        let protection = row.text(next())
        var damage: String?
        var control = AccessControl(unsatisfiableWith: .whenUnlocked)
        let stored = cache.accessControl(row: row, column: next())
        if let parsed = stored?.control {
            control = parsed
            if protection != parsed.protection.rawValue {
                damage = "its protection class column disagrees with its access control"
            }
        } else {
            damage = "its access control is missing or does not parse"
        }
        let fields = ItemFields(
            identity: identity, label: label, generic: generic, accessControl: control,
            created: Timestamp(nanoseconds: row.integer(next())), modified: Timestamp(nanoseconds: row.integer(next())))
        let nonce = values ? row.blob(next()) ?? [] : []
        let ciphertext = values ? row.blob(next()) ?? [] : []
        return ItemRecord(
            id: ItemID(id), fields: fields,
            sealed: .encrypted(nonce: nonce, ciphertext: ciphertext, stored: stored),
            damage: damage.map { "item #\(id) is damaged or was tampered with: \($0)" })
    }

    /// Opens the value with the key and the record's fields as associated data.
    public func open(_ item: ItemRecord) throws(KeygateError) -> SecretData {
        if let damage = item.damage { throw KeygateError(.decode, damage, condition: .damagedItem) }
        guard case .encrypted(let nonce, let ciphertext, let stored) = item.sealed else {
            throw KeygateError(.decode, "the record was not read from this store", condition: .foreignRecord)
        }
        guard !nonce.isEmpty else {
            throw KeygateError(
                .decode, "item #\(item.id.rawValue) was read without its value (a search for attributes only)",
                condition: .foreignRecord)
        }
        // The text the row holds, as the value was sealed with it (a row edited behind the
        // store's back holds another text and does not open), for exactly the control the
        // record carries.
        guard let stored, let control = stored.control, control == item.fields.accessControl else {
            throw KeygateError(.decode, "item #\(item.id.rawValue) does not hold the value it was read with")
        }
        let associatedData = ItemSealing.associatedData(identity: item.fields.identity, controlText: stored.text)
        do {
            return try Sodium.open(ciphertext, nonce: nonce, key: sealingKey, associatedData: associatedData)
        } catch {
            throw KeygateError(
                .decode,
                "item #\(item.id.rawValue) cannot be decrypted: it was tampered with, or sealed under another key",
                cause: error.cause)
        }
    }

    /// Adds items in one transaction.
    @discardableResult
    public func insert(_ items: [NewItem], joining participant: (any TransactionParticipant)?) throws(KeygateError)
        -> [ItemRecord]
    {
        try ItemLimits.check(items.map { ($0.fields.identity, $0.data.count) }, maximum: maximumValueLength)
        var sealed: [(fields: ItemFields, controlText: String, box: (nonce: [UInt8], ciphertext: [UInt8]))] = []
        sealed.reserveCapacity(items.count)
        for item in items {
            let (controlText, box) = try seal(item.data, for: item.fields)
            sealed.append((item.fields, controlText, box))
        }
        return try connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) -> [ItemRecord] in
            try itemTransaction(connection, joining: participant) { () throws(KeygateError) -> [ItemRecord] in
                var records: [ItemRecord] = []
                records.reserveCapacity(sealed.count)
                for (fields, controlText, box) in sealed {
                    let statement = try connection.statement(
                        .insert,
                        "INSERT INTO items (agrp, acct, svce, sync, labl, gena, pdmn, accc, cdat, mdat, nonce, value) "
                            + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
                    do throws(KeygateError) {
                        try statement.run(Self.values(fields, controlText) + [.blob(box.nonce), .blob(box.ciphertext)])
                    } catch  where error.status == .duplicateItem {
                        throw KeygateError(
                            .duplicateItem, "an item \(fields.identity) already exists", cause: error.cause)
                    }
                    records.append(
                        ItemRecord(
                            id: ItemID(connection.lastInsertID), fields: fields,
                            sealed: .encrypted(
                                nonce: box.nonce, ciphertext: box.ciphertext,
                                stored: StoredAccessControl(text: controlText, control: fields.accessControl))))
                }
                return records
            }
        }
    }

    /// Seals `data` for `fields`, rendering their access control's text once for both the
    /// associated data and the `accc` column.
    private func seal(
        _ data: SecretData, for fields: ItemFields
    ) throws(KeygateError) -> (controlText: String, box: (nonce: [UInt8], ciphertext: [UInt8])) {
        let controlText = fields.accessControl.textForm
        let associatedData = ItemSealing.associatedData(identity: fields.identity, controlText: controlText)
        return (controlText, try Sodium.seal(data, key: sealingKey, associatedData: associatedData))
    }

    /// Replaces items in one transaction; a collision, a missing item, or an item another
    /// writer changed since it was read rolls back everything.
    public func replace(_ replacements: [ItemReplacement], joining participant: (any TransactionParticipant)?)
        throws(KeygateError)
    {
        try ItemLimits.check(replacements.map { ($0.fields.identity, $0.data.count) }, maximum: maximumValueLength)
        var sealed:
            [(
                id: ItemID, fields: ItemFields, controlText: String, box: (nonce: [UInt8], ciphertext: [UInt8]),
                expected: SealedValue?
            )] = []
        sealed.reserveCapacity(replacements.count)
        for replacement in replacements {
            let (controlText, box) = try seal(replacement.data, for: replacement.fields)
            sealed.append((replacement.id, replacement.fields, controlText, box, replacement.expected))
        }
        try connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) in
            try itemTransaction(connection, joining: participant) { () throws(KeygateError) in
                for entry in sealed {
                    if let expected = entry.expected,
                        try !Self.holdsAsRead(entry.id, expected, on: connection, else: "nothing was changed")
                    {
                        throw KeygateError(.itemNotFound, "item \(entry.id) no longer exists")
                    }
                    // Move every row out of the way first, so swaps between items do not collide halfway.
                    let park = try connection.statement(
                        .park, "UPDATE items SET agrp = agrp || x'00' || CAST(id AS TEXT) WHERE id = ?")
                    try park.run([.integer(entry.id.rawValue)])
                    guard park.changes == 1 else {
                        throw KeygateError(.itemNotFound, "item \(entry.id) no longer exists")
                    }
                }
                for entry in sealed {
                    let statement = try connection.statement(
                        .update,
                        "UPDATE items SET agrp = ?, acct = ?, svce = ?, sync = ?, labl = ?, gena = ?, pdmn = ?, accc = ?, "
                            + "cdat = ?, mdat = ?, nonce = ?, value = ? WHERE id = ?")
                    do throws(KeygateError) {
                        try statement.run(
                            Self.values(entry.fields, entry.controlText) + [
                                .blob(entry.box.nonce), .blob(entry.box.ciphertext), .integer(entry.id.rawValue),
                            ])
                    } catch  where error.status == .duplicateItem {
                        throw KeygateError(
                            .duplicateItem, "an item \(entry.fields.identity) already exists", cause: error.cause)
                    }
                }
            }
        }
    }

    /// Deletes items in one transaction.
    public func delete(_ ids: [ItemID], joining participant: (any TransactionParticipant)?) throws(KeygateError) {
        try connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) in
            try itemTransaction(connection, joining: participant) { () throws(KeygateError) in
                for id in ids {
                    try connection.statement(.delete, "DELETE FROM items WHERE id = ?").run([.integer(id.rawValue)])
                }
            }
        }
    }

    /// Deletes items in one transaction, only as they were read: a row whose nonce is no longer
    /// the record's (another writer replaced it since) rolls back everything.
    public func delete(_ records: [ItemRecord], joining participant: (any TransactionParticipant)?)
        throws(KeygateError)
    {
        try connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) in
            try itemTransaction(connection, joining: participant) { () throws(KeygateError) in
                for record in records {
                    // Gone already: ignored.
                    guard try Self.holdsAsRead(record.id, record.sealed, on: connection, else: "nothing was deleted")
                    else { continue }
                    try connection.statement(.delete, "DELETE FROM items WHERE id = ?").run([
                        .integer(record.id.rawValue)
                    ])
                }
            }
        }
    }

    /// Whether row `id` still holds the value `expected` was read with (its nonce); false when
    /// the row is gone.
    /// - Throws: `errSecNotAvailable` (``KeygatePolicy/KeygateError/Condition/racingWriter``),
    ///   ending with `outcome`, when another writer replaced it since.
    private static func holdsAsRead(
        _ id: ItemID, _ expected: SealedValue, on connection: SQLiteConnection, else outcome: String
    ) throws(KeygateError) -> Bool {
        // A record of another store holds no nonce of ours: it never matches.
        let nonce: [UInt8]? = if case .encrypted(let nonce, _, _) = expected { nonce } else { nil }
        let check = try connection.statement(.currentNonce, "SELECT nonce FROM items WHERE id = ?")
        try check.bind(.integer(id.rawValue), at: 1)
        let found = try check.step()
        let current = found ? check.blob(0) : nil
        check.reset()
        guard found else { return false }
        guard nonce != nil, current == nonce else {
            throw KeygateError(
                .notAvailable, "item \(id) was changed by another writer; \(outcome)", condition: .racingWriter)
        }
        return true
    }

    private static func values(_ fields: ItemFields, _ controlText: String) -> [SQLiteStatement.Value] {
        [
            .text(fields.identity.accessGroup), .text(fields.identity.account), .text(fields.identity.service),
            .integer(fields.identity.synchronizable ? 1 : 0), fields.label.map { .text($0) } ?? .null,
            fields.generic.map { .blob($0) } ?? .null, .text(fields.accessControl.protection.rawValue),
            .text(controlText), .integer(fields.created.nanoseconds),
            .integer(fields.modified.nanoseconds),
        ]
    }
}
