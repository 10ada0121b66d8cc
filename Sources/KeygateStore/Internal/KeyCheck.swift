import KeygatePolicy

/// The store's key-check value: a known constant sealed under the store's key, kept in the
/// `metadata` table. Opening it proves a key is the store's own before anything is sealed
/// under it, so a wrong 32-byte key is refused at open with `errSecDecode` instead of mixing
/// items under two keys. A store made before key-checks gets one at its first open whose key
/// opens one of its items (or at once, when it holds none).
enum KeyCheck {
    static let name = "keycheck.v1"
    private static let constant = "keygate.keycheck.v1"
    private static let associatedData = Array("keygate.keycheck.v1\u{0}".utf8)

    /// Checks `key` against the store, writing the key-check value when there is none yet.
    /// - Throws: `errSecDecode` when the key is not the store's; nothing is written then.
    static func verify(_ key: SecretData, on connection: SQLiteConnection, hasItems: Bool) throws(KeygateError) {
        if let stored = try stored(on: connection) {
            guard opens(stored, key: key) else { throw mismatch(connection.path) }
            return
        }
        if hasItems {
            guard try anyItemOpens(with: key, on: connection) else {
                throw KeygateError(
                    .decode,
                    "the key does not open any item of \(connection.path): it is not this store's key; nothing was changed",
                    condition: .wrongKey)
            }
        }
        let box = try Sodium.seal(SecretData(constant), key: key, associatedData: associatedData)
        try connection.transaction { () throws(KeygateError) in
            try connection.statement("INSERT OR IGNORE INTO metadata (name, value) VALUES (?, ?)").run([
                .text(name), .blob(box.nonce + box.ciphertext),
            ])
        }
        // Another process may have written its own first; the stored one decides.
        guard let stored = try stored(on: connection), opens(stored, key: key) else { throw mismatch(connection.path) }
    }

    /// Checks `key` against a key-check value already read (``EstablishedStore``): nothing is
    /// read or written.
    /// - Throws: `errSecDecode` when the key is not the store's.
    static func verify(_ key: SecretData, stored: [UInt8], path: String) throws(KeygateError) {
        guard opens(stored, key: key) else { throw mismatch(path) }
    }

    private static func mismatch(_ path: String) -> KeygateError {
        KeygateError(
            .decode,
            "the key is not the key of \(path): the store's key-check value does not open under it; nothing was changed",
            condition: .wrongKey)
    }

    /// The stored key-check value, or `nil` when the store has none yet.
    static func stored(on connection: SQLiteConnection) throws(KeygateError) -> [UInt8]? {
        let statement = try connection.statement("SELECT value FROM metadata WHERE name = ?")
        defer { statement.reset() }
        try statement.bind([.text(name)])
        return try statement.step() ? statement.blob(0) ?? [] : nil
    }

    private static func opens(_ stored: [UInt8], key: SecretData) -> Bool {
        guard stored.count > Sodium.nonceLength else { return false }
        let nonce = Array(stored[..<Sodium.nonceLength])
        let ciphertext = Array(stored[Sodium.nonceLength...])
        guard let opened = try? Sodium.open(ciphertext, nonce: nonce, key: key, associatedData: associatedData) else {
            return false
        }
        return opened == SecretData(constant)
    }

    private static func anyItemOpens(with key: SecretData, on connection: SQLiteConnection) throws(KeygateError)
        -> Bool
    {
        let statement = try connection.statement("SELECT \(SQLiteItemStore.columns) FROM items ORDER BY id")
        defer { statement.reset() }
        var cache = ParsedRowCache()
        while try statement.step() {
            guard let record = try? SQLiteItemStore.record(from: statement, cache: &cache), record.damage == nil,
                case .encrypted(let nonce, let ciphertext, let stored?) = record.sealed
            else { continue }
            let data = ItemSealing.associatedData(identity: record.fields.identity, controlText: stored.text)
            if (try? Sodium.open(ciphertext, nonce: nonce, key: key, associatedData: data)) != nil { return true }
        }
        return false
    }
}
