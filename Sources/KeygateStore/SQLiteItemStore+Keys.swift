public import KeygateItems
public import KeygatePolicy
import Synchronization

/// Key items in the `keys` table (schema v3), sealed under the store's key like values: the
/// keeper blob's associated data binds every column a decision or a use depends on (group,
/// label, tag, application label, type, token, imported, public key, access control), so an
/// edited row or a blob moved to another row does not open.
extension SQLiteItemStore: KeyItemStore {
    static let keyColumns = "id, agrp, labl, atag, klbl, type, tkid, impt, pubk, pdmn, accc, cdat, mdat, nonce, value"

    /// The keys matching `filter`, in the order they were added.
    public func keys(matching filter: KeyFilter) throws(KeygateError) -> [KeyRecord] {
        guard !filter.accessGroups.isEmpty else { return [] }
        var conditions = [
            "agrp IN (" + Array(repeating: "?", count: filter.accessGroups.count).joined(separator: ", ") + ")"
        ]
        var values: [SQLiteStatement.Value] = filter.accessGroups.map { .text($0) }
        if let label = filter.label {
            conditions.append("labl = ?")
            values.append(.text(label))
        }
        if let tag = filter.applicationTag {
            conditions.append("atag = ?")
            values.append(.blob(tag))
        }
        if let applicationLabel = filter.applicationLabel {
            conditions.append("klbl = ?")
            values.append(.blob(applicationLabel))
        }
        if let type = filter.type {
            conditions.append("type = ?")
            values.append(.text(type.rawValue))
        }
        let sql = "SELECT \(Self.keyColumns) FROM keys WHERE " + conditions.joined(separator: " AND ") + " ORDER BY id"
        return try connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) -> [KeyRecord] in
            let statement = try connection.statement(sql)
            defer { statement.reset() }
            try statement.bind(values)
            var records: [KeyRecord] = []
            while try statement.step() {
                let record = Self.keyRecord(from: statement)
                // SQLite compares text by bytes already; the filter checks again for blobs of
                // equal bytes stored under another affinity.
                if filter.matches(record.fields) || record.damage != nil { records.append(record) }
            }
            return records
        }
    }

    /// The record in the current row of a select of ``keyColumns``.
    static func keyRecord(from row: SQLiteStatement) -> KeyRecord {
        let id = row.integer(0)
        var damage: [String] = []
        let group = row.text(1) ?? ""
        let typeText = row.text(5) ?? ""
        let parsedType = KeyType(rawValue: typeText)
        if parsedType == nil { damage.append("its type '\(typeText)' is not a key type") }
        let type = parsedType ?? .p256
        let controlText = row.text(10) ?? ""
        var control = AccessControl(unsatisfiableWith: .whenUnlocked)
        if let parsed = try? AccessControl(textForm: controlText) {
            control = parsed
            if row.text(9) != parsed.protection.rawValue {
                damage.append("its protection class column disagrees with its access control")
            }
        } else {
            damage.append("its access control is missing or does not parse")
        }
        let fields = KeyFields(
            accessGroup: group, label: row.text(2), applicationTag: row.blob(3) ?? [],
            applicationLabel: row.blob(4) ?? [], type: type, tokenID: row.text(6) ?? "", imported: row.integer(7) != 0,
            publicKey: row.blob(8) ?? [], accessControl: control,
            created: Timestamp(nanoseconds: row.integer(11)), modified: Timestamp(nanoseconds: row.integer(12)))
        return KeyRecord(
            id: ItemID(id), fields: fields,
            sealed: .encrypted(nonce: row.blob(13) ?? [], ciphertext: row.blob(14) ?? [], controlText: controlText),
            damage: damage.isEmpty
                ? nil : "key #\(id) is damaged or was tampered with: " + damage.joined(separator: "; "))
    }

    /// The keeper blob, opened with the key and the record's fields as associated data.
    public func openKey(_ record: KeyRecord) throws(KeygateError) -> SecretData {
        if let damage = record.damage { throw KeygateError(.decode, damage, condition: .damagedItem) }
        guard case .encrypted(let nonce, let ciphertext, let controlText) = record.sealed else {
            throw KeygateError(.decode, "the key record was not read from this store", condition: .foreignRecord)
        }
        guard (try? AccessControl(textForm: controlText)) == record.fields.accessControl else {
            throw KeygateError(.decode, "key \(record.id) does not hold the blob it was read with")
        }
        let associatedData = KeySealing.associatedData(record.fields, controlText: controlText)
        do {
            return try Sodium.open(ciphertext, nonce: nonce, key: sealingKey, associatedData: associatedData)
        } catch {
            throw KeygateError(
                .decode, "key \(record.id) cannot be decrypted: it was tampered with, or sealed under another key",
                cause: error.cause)
        }
    }

    /// Adds a key in one transaction.
    @discardableResult
    public func insertKey(_ fields: KeyFields, blob: SecretData, joining participant: (any TransactionParticipant)?)
        throws(KeygateError) -> KeyRecord
    {
        try KeyRows.check(blob, for: fields)
        let controlText = fields.accessControl.textForm
        let box = try Sodium.seal(
            blob, key: sealingKey, associatedData: KeySealing.associatedData(fields, controlText: controlText))
        return try connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) -> KeyRecord in
            try itemTransaction(connection, joining: participant) { () throws(KeygateError) -> KeyRecord in
                let statement = try connection.statement(
                    "INSERT INTO keys (agrp, labl, atag, klbl, type, tkid, impt, pubk, pdmn, accc, cdat, mdat, nonce, "
                        + "value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
                do throws(KeygateError) {
                    try statement.run(Self.keyValues(fields, controlText) + [.blob(box.nonce), .blob(box.ciphertext)])
                } catch  where error.status == .duplicateItem {
                    throw KeyRows.duplicate(fields, cause: error.cause)
                }
                return KeyRecord(
                    id: ItemID(connection.lastInsertID), fields: fields,
                    sealed: .encrypted(nonce: box.nonce, ciphertext: box.ciphertext, controlText: controlText))
            }
        }
    }

    /// Gives a key new fields in one transaction, its blob sealed again for them.
    public func updateKey(_ record: KeyRecord, to fields: KeyFields, joining participant: (any TransactionParticipant)?)
        throws(KeygateError)
    {
        let blob = try openKey(record)
        let controlText = fields.accessControl.textForm
        let box = try Sodium.seal(
            blob, key: sealingKey, associatedData: KeySealing.associatedData(fields, controlText: controlText))
        try connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) in
            try itemTransaction(connection, joining: participant) { () throws(KeygateError) in
                guard try Self.keyHoldsAsRead(record, on: connection) else {
                    throw KeygateError(.itemNotFound, "key \(record.id) no longer exists")
                }
                let statement = try connection.statement(
                    "UPDATE keys SET agrp = ?, labl = ?, atag = ?, klbl = ?, type = ?, tkid = ?, impt = ?, pubk = ?, "
                        + "pdmn = ?, accc = ?, cdat = ?, mdat = ?, nonce = ?, value = ? WHERE id = ?")
                do throws(KeygateError) {
                    try statement.run(
                        Self.keyValues(fields, controlText) + [
                            .blob(box.nonce), .blob(box.ciphertext), .integer(record.id.rawValue),
                        ])
                } catch  where error.status == .duplicateItem {
                    throw KeyRows.duplicate(fields, cause: error.cause)
                }
            }
        }
    }

    /// Deletes keys as they were read, in one transaction.
    public func deleteKeys(_ records: [KeyRecord], joining participant: (any TransactionParticipant)?)
        throws(KeygateError)
    {
        try connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) in
            try itemTransaction(connection, joining: participant) { () throws(KeygateError) in
                for record in records where try Self.keyHoldsAsRead(record, on: connection) {
                    try connection.statement("DELETE FROM keys WHERE id = ?").run([.integer(record.id.rawValue)])
                }
            }
        }
    }

    /// Whether row `record.id` still holds the blob the record was read with; false when gone.
    /// - Throws: `errSecNotAvailable` (racing writer) when another writer replaced it since.
    private static func keyHoldsAsRead(_ record: KeyRecord, on connection: SQLiteConnection) throws(KeygateError)
        -> Bool
    {
        let check = try connection.statement("SELECT nonce FROM keys WHERE id = ?")
        defer { check.reset() }
        try check.bind(.integer(record.id.rawValue), at: 1)
        guard try check.step() else { return false }
        guard case .encrypted(let nonce, _, _) = record.sealed, check.blob(0) == nonce else {
            throw KeyRows.racing(record.id, "nothing was changed")
        }
        return true
    }

    private static func keyValues(_ fields: KeyFields, _ controlText: String) -> [SQLiteStatement.Value] {
        [
            .text(fields.accessGroup), fields.label.map { .text($0) } ?? .null, .blob(fields.applicationTag),
            .blob(fields.applicationLabel), .text(fields.type.rawValue), .text(fields.tokenID),
            .integer(fields.imported ? 1 : 0), .blob(fields.publicKey), .text(fields.accessControl.protection.rawValue),
            .text(controlText), .integer(fields.created.nanoseconds), .integer(fields.modified.nanoseconds),
        ]
    }
}
