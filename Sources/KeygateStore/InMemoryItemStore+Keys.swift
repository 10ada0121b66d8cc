public import KeygateItems
public import KeygatePolicy
import Synchronization

/// Key items in memory, beside the items, under the same lock and commits.
extension InMemoryItemStore: KeyItemStore {
    /// The keys matching `filter`, in the order they were added.
    public func keys(matching filter: KeyFilter) throws(KeygateError) -> [KeyRecord] {
        state.withLock { state in
            state.keys.filter { filter.matches($0.value.fields) }.sorted { $0.key < $1.key }
                .map {
                    KeyRecord(
                        id: $0.key, fields: $0.value.fields, sealed: .plain($0.value.blob, fields: $0.value.fields))
                }
        }
    }

    /// The blob read with the record.
    /// - Throws: `errSecDecode` when the record's fields are not the ones it was stored with.
    public func openKey(_ record: KeyRecord) throws(KeygateError) -> SecretData {
        guard case .plain(let blob, let fields) = record.sealed else {
            throw KeygateError(.decode, "the key record was not read from this store", condition: .foreignRecord)
        }
        guard fields == record.fields else {
            throw KeygateError(.decode, "key \(record.id) does not hold the blob it was read with")
        }
        return blob
    }

    /// Adds a key.
    @discardableResult
    public func insertKey(_ fields: KeyFields, blob: SecretData, joining participant: (any TransactionParticipant)?)
        throws(KeygateError) -> KeyRecord
    {
        try KeyRows.check(blob, for: fields)
        return try commit(joining: participant) { (next: inout State) throws(KeygateError) -> KeyRecord in
            guard !next.keys.values.contains(where: { Self.collide($0.fields, fields) }) else {
                throw KeyRows.duplicate(fields)
            }
            let id = ItemID(next.nextID)
            next.nextID += 1
            next.keys[id] = (fields, blob)
            return KeyRecord(id: id, fields: fields, sealed: .plain(blob, fields: fields))
        }
    }

    /// Gives a key new fields, keeping its blob.
    public func updateKey(_ record: KeyRecord, to fields: KeyFields, joining participant: (any TransactionParticipant)?)
        throws(KeygateError)
    {
        try commit(joining: participant) { (next: inout State) throws(KeygateError) in
            guard let current = next.keys[record.id] else {
                throw KeygateError(.itemNotFound, "key \(record.id) no longer exists")
            }
            guard Self.holds(current.blob, current.fields, record.sealed) else {
                throw KeyRows.racing(record.id, "nothing was changed")
            }
            if next.keys.contains(where: { $0.key != record.id && Self.collide($0.value.fields, fields) }) {
                throw KeyRows.duplicate(fields)
            }
            next.keys[record.id] = (fields, current.blob)
        }
    }

    /// Deletes keys as they were read: one changed since deletes nothing.
    public func deleteKeys(_ records: [KeyRecord], joining participant: (any TransactionParticipant)?)
        throws(KeygateError)
    {
        try commit(joining: participant) { (next: inout State) throws(KeygateError) in
            for record in records {
                guard let current = next.keys[record.id] else { continue }
                guard Self.holds(current.blob, current.fields, record.sealed) else {
                    throw KeyRows.racing(record.id, "nothing was deleted")
                }
                next.keys[record.id] = nil
            }
        }
    }

    /// Whether two keys would have the same primary key.
    private static func collide(_ a: KeyFields, _ b: KeyFields) -> Bool {
        a.accessGroup.sameBytes(as: b.accessGroup) && a.applicationLabel == b.applicationLabel
            && a.applicationTag == b.applicationTag && a.type == b.type && a.tokenID == b.tokenID
    }

    /// Whether the stored key is the one `sealed` was read as (the same blob and fields).
    private static func holds(_ blob: SecretData, _ fields: KeyFields, _ sealed: SealedKey) -> Bool {
        if case .plain(let read, let readFields) = sealed { read === blob && readFields == fields } else { false }
    }
}
