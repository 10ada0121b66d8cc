import Glibc
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
public final class SQLiteItemStore: ItemStore {
    private let connection: Mutex<SQLiteConnection>
    private let keyProvider: any KeyProvider
    private let cachedKey = Mutex<SecretData?>(nil)
    /// The database file.
    public let path: String

    /// `$XDG_DATA_HOME/keygate`, else `~/.local/share/keygate`.
    public static func defaultDirectory() throws(KeygateError) -> String {
        if let data = getenv("XDG_DATA_HOME").map({ String(cString: $0) }), data.hasPrefix("/") {
            return data + "/keygate"
        }
        guard let home = getenv("HOME").map({ String(cString: $0) }), home.hasPrefix("/") else {
            throw KeygateError(.notAvailable, "neither XDG_DATA_HOME nor HOME is set to an absolute path")
        }
        return home + "/.local/share/keygate"
    }

    /// The default database, `items.db` in ``defaultDirectory()``.
    public static func defaultPath() throws(KeygateError) -> String { try defaultDirectory() + "/items.db" }

    /// Opens (creating when needed) the database at `path`.
    /// - Parameters:
    ///   - path: the database file; its directory is created 0700 when missing.
    ///   - keyProvider: the sealing key; the default keeps it in `path + ".key"`.
    ///   - busyTimeoutMilliseconds: how long to wait for another process's write lock.
    /// - Throws: ``KeygatePolicy/KeygateError``: `errSecNotAvailable` for a corrupt or newer database or an
    ///   unusable key, `errSecIO` for I/O errors.
    public init(
        path: String, keyProvider: (any KeyProvider)? = nil, busyTimeoutMilliseconds: Int32 = 10_000
    ) throws(KeygateError) {
        self.path = path
        try Self.prepareFile(at: path)
        let opened = try SQLiteConnection(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        try opened.execute("PRAGMA journal_mode = WAL")
        try opened.execute("PRAGMA synchronous = FULL")
        try SQLiteSchema.migrate(opened)
        let count = try opened.statement("SELECT EXISTS (SELECT 1 FROM items)")
        _ = try count.step()
        let hasItems = count.integer(0) != 0
        count.reset()
        connection = Mutex(opened)
        // A missing key file is created only for an empty store: items sealed under a lost
        // key must not be joined by items under a new one.
        self.keyProvider = keyProvider ?? KeyFileProvider(path: path + ".key", createsMissingKey: !hasItems)
    }

    /// The sealing key, read once and kept (wiped when the store is released).
    private func key() throws(KeygateError) -> SecretData {
        if let key = cachedKey.withLock({ $0 }) { return key }
        let key = try keyProvider.key()
        cachedKey.withLock { $0 = key }
        return key
    }

    /// Creates the directory (0700) and an empty file (0600) when missing; leaves existing ones.
    private static func prepareFile(at path: String) throws(KeygateError) {
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if !directory.isEmpty { try makeDirectories(directory) }
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw KeygateError(.io, "cannot create or open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & 0o077 == 0 else {
            throw KeygateError(
                .notAvailable,
                "\(path) is readable or writable by other users (mode \(String(status.st_mode & 0o777, radix: 8))); chmod 600 it"
            )
        }
    }

    private static func makeDirectories(_ directory: String) throws(KeygateError) {
        var current = ""
        for part in directory.split(separator: "/", omittingEmptySubsequences: true) {
            current += "/" + part
            if mkdir(current, 0o700) != 0 && errno != EEXIST {
                throw KeygateError(.io, "cannot create \(current): \(String(cString: strerror(errno)))")
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

    private static let columns = "id, agrp, acct, svce, sync, labl, gena, pdmn, accc, cdat, mdat, nonce, value"

    /// The items matching `filter`, in the order they were added.
    public func items(matching filter: ItemFilter) throws(KeygateError) -> [ItemRecord] {
        guard !filter.accessGroups.isEmpty else { return [] }
        var conditions = [
            "agrp IN (" + Array(repeating: "?", count: filter.accessGroups.count).joined(separator: ", ") + ")"
        ]
        var values = filter.accessGroups.map { SQLiteStatement.Value.text($0) }
        if let service = filter.service { conditions.append("svce = ?"); values.append(.text(service)) }
        if let account = filter.account { conditions.append("acct = ?"); values.append(.text(account)) }
        if let label = filter.label { conditions.append("labl = ?"); values.append(.text(label)) }
        if let generic = filter.generic { conditions.append("gena = ?"); values.append(.blob(generic)) }
        if let sync = filter.synchronizable { conditions.append("sync = ?"); values.append(.integer(sync ? 1 : 0)) }
        if let protection = filter.protection {
            conditions.append("pdmn = ?"); values.append(.text(protection.rawValue))
        }
        let sql = "SELECT \(Self.columns) FROM items WHERE " + conditions.joined(separator: " AND ") + " ORDER BY id"
        return try connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) -> [ItemRecord] in
            let statement = try connection.statement(sql)
            defer { statement.reset() }
            try statement.bind(values)
            var records: [ItemRecord] = []
            while try statement.step() { records.append(try Self.record(from: statement)) }
            return records
        }
    }

    private static func record(from row: SQLiteStatement) throws(KeygateError) -> ItemRecord {
        let id = row.integer(0)
        guard let group = row.text(1), let account = row.text(2), let service = row.text(3) else {
            throw KeygateError(.decode, "item #\(id) is damaged: its identity columns are missing")
        }
        let identity = ItemIdentity(
            accessGroup: group, account: account, service: service, synchronizable: row.integer(4) != 0)
        var damage: String?
        var control = AccessControl(unsatisfiableWith: .whenUnlocked)
        if let controlText = row.text(8), let parsed = try? AccessControl(textForm: controlText) {
            control = parsed
            if row.text(7) != parsed.protection.rawValue {
                damage = "its protection class column disagrees with its access control"
            }
        } else {
            damage = "its access control is missing or does not parse"
        }
        let fields = ItemFields(
            identity: identity, label: row.text(5), generic: row.blob(6), accessControl: control,
            created: Timestamp(nanoseconds: row.integer(9)), modified: Timestamp(nanoseconds: row.integer(10)))
        return ItemRecord(
            id: ItemID(id), fields: fields,
            sealed: .encrypted(nonce: row.blob(11) ?? [], ciphertext: row.blob(12) ?? []),
            damage: damage.map { "item #\(id) is damaged or was tampered with: \($0)" })
    }

    /// Opens the value with the key and the record's fields as associated data.
    public func open(_ item: ItemRecord) throws(KeygateError) -> SecretData {
        if let damage = item.damage { throw KeygateError(.decode, damage) }
        guard case .encrypted(let nonce, let ciphertext) = item.sealed else {
            throw KeygateError(.decode, "the record was not read from this store")
        }
        let key = try key()
        guard
            let value = Sodium.open(
                ciphertext, nonce: nonce, key: key, associatedData: ItemSealing.associatedData(for: item.fields))
        else {
            throw KeygateError(
                .decode,
                "item #\(item.id.rawValue) cannot be decrypted: it was tampered with, or sealed under another key")
        }
        return value
    }

    /// Adds items in one transaction.
    @discardableResult
    public func insert(_ items: [NewItem]) throws(KeygateError) -> [ItemRecord] {
        let key = try key()
        let sealed = items.map { item in
            (
                item.fields,
                Sodium.seal(item.data, key: key, associatedData: ItemSealing.associatedData(for: item.fields))
            )
        }
        return try connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) -> [ItemRecord] in
            try connection.transaction { () throws(KeygateError) -> [ItemRecord] in
                var records: [ItemRecord] = []
                for (fields, box) in sealed {
                    let statement = try connection.statement(
                        "INSERT INTO items (agrp, acct, svce, sync, labl, gena, pdmn, accc, cdat, mdat, nonce, value) "
                            + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
                    do throws(KeygateError) {
                        try statement.run(Self.values(fields) + [.blob(box.nonce), .blob(box.ciphertext)])
                    } catch  where error.status == .duplicateItem {
                        throw KeygateError(.duplicateItem, "an item \(fields.identity) already exists")
                    }
                    records.append(
                        ItemRecord(
                            id: ItemID(connection.lastInsertID), fields: fields,
                            sealed: .encrypted(nonce: box.nonce, ciphertext: box.ciphertext)))
                }
                return records
            }
        }
    }

    /// Replaces items in one transaction; a collision, a missing item, or an item another
    /// writer changed since it was read rolls back everything.
    public func replace(_ replacements: [ItemReplacement]) throws(KeygateError) {
        let key = try key()
        let sealed = replacements.map { replacement in
            (
                id: replacement.id, fields: replacement.fields,
                box: Sodium.seal(
                    replacement.data, key: key, associatedData: ItemSealing.associatedData(for: replacement.fields)),
                expected: replacement.expected
            )
        }
        try connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) in
            try connection.transaction { () throws(KeygateError) in
                for entry in sealed {
                    if case .encrypted(let nonce, _)? = entry.expected {
                        let check = try connection.statement("SELECT nonce FROM items WHERE id = ?")
                        try check.bind([.integer(entry.id.rawValue)])
                        let found = try check.step()
                        let current = found ? check.blob(0) : nil
                        check.reset()
                        guard found else { throw KeygateError(.itemNotFound, "item \(entry.id) no longer exists") }
                        guard current == nonce else {
                            throw KeygateError(
                                .notAvailable, "item \(entry.id) was changed by another writer; nothing was changed")
                        }
                    }
                    // Move every row out of the way first, so swaps between items do not collide halfway.
                    let park = try connection.statement(
                        "UPDATE items SET agrp = agrp || x'00' || CAST(id AS TEXT) WHERE id = ?")
                    try park.run([.integer(entry.id.rawValue)])
                    guard park.changes == 1 else {
                        throw KeygateError(.itemNotFound, "item \(entry.id) no longer exists")
                    }
                }
                for entry in sealed {
                    let statement = try connection.statement(
                        "UPDATE items SET agrp = ?, acct = ?, svce = ?, sync = ?, labl = ?, gena = ?, pdmn = ?, accc = ?, "
                            + "cdat = ?, mdat = ?, nonce = ?, value = ? WHERE id = ?")
                    do throws(KeygateError) {
                        try statement.run(
                            Self.values(entry.fields) + [
                                .blob(entry.box.nonce), .blob(entry.box.ciphertext), .integer(entry.id.rawValue),
                            ])
                    } catch  where error.status == .duplicateItem {
                        throw KeygateError(.duplicateItem, "an item \(entry.fields.identity) already exists")
                    }
                }
            }
        }
    }

    /// Deletes items in one transaction.
    public func delete(_ ids: [ItemID]) throws(KeygateError) {
        try connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) in
            try connection.transaction { () throws(KeygateError) in
                for id in ids {
                    try connection.statement("DELETE FROM items WHERE id = ?").run([.integer(id.rawValue)])
                }
            }
        }
    }

    private static func values(_ fields: ItemFields) -> [SQLiteStatement.Value] {
        [
            .text(fields.identity.accessGroup), .text(fields.identity.account), .text(fields.identity.service),
            .integer(fields.identity.synchronizable ? 1 : 0), fields.label.map { .text($0) } ?? .null,
            fields.generic.map { .blob($0) } ?? .null, .text(fields.accessControl.protection.rawValue),
            .text(fields.accessControl.textForm), .integer(fields.created.nanoseconds),
            .integer(fields.modified.nanoseconds),
        ]
    }
}
