public import KeygateItems
public import KeygatePolicy

/// One stored key item as read: its fields and its sealed keeper blob, from one consistent read.
///
/// The blob can only be had through ``KeyItemStore/openKey(_:)``, which checks that it belongs
/// to exactly these fields.
public struct KeyRecord: Hashable, Sendable {
    /// The backend's handle.
    public let id: ItemID
    /// The fields.
    public let fields: KeyFields
    /// The sealed blob, opaque outside the backend.
    package let sealed: SealedKey
    /// Why the stored row cannot be trusted (its access control or type does not parse, or its
    /// columns disagree), or nil. A damaged key can be deleted; using or updating it is
    /// `errSecDecode`.
    public let damage: String?

    package init(id: ItemID, fields: KeyFields, sealed: SealedKey, damage: String? = nil) {
        self.id = id
        self.fields = fields
        self.sealed = sealed
        self.damage = damage
    }
}

/// A keeper blob as a backend keeps it.
package enum SealedKey: Hashable, Sendable {
    /// In memory (``InMemoryItemStore``), with the fields it was stored with.
    indirect case plain(SecretData, fields: KeyFields)
    /// XChaCha20-Poly1305 ciphertext and its nonce (``SQLiteItemStore``), with the
    /// access-control text the row holds (what the associated data binds).
    case encrypted(nonce: [UInt8], ciphertext: [UInt8], controlText: String)

    package static func == (lhs: SealedKey, rhs: SealedKey) -> Bool {
        switch (lhs, rhs) {
        case (.plain(let a, let f1), .plain(let b, let f2)): a === b && f1 == f2
        case (.encrypted(let n1, let c1, _), .encrypted(let n2, let c2, _)): n1 == n2 && c1 == c2
        default: false
        }
    }

    package func hash(into hasher: inout Hasher) {
        switch self {
        case .plain(let data, _): hasher.combine(ObjectIdentifier(data))
        case .encrypted(let nonce, _, _): hasher.combine(nonce)
        }
    }
}

/// Where key items live (spec §9.4): a table beside the items, in the same file and the same
/// transactions, never listed or read as items.
///
/// Duties of every conforming type, as for ``ItemStore``: at most one key per access group,
/// application label, application tag, type and token (`errSecDuplicateItem`, nothing changed);
/// the blob opens only for exactly the fields it was stored with (`errSecDecode` otherwise); an
/// update or delete of a key another writer changed since it was read fails with
/// `errSecNotAvailable` (``KeygatePolicy/KeygateError/Condition/racingWriter``) and changes
/// nothing; a damaged row is returned with ``KeyRecord/damage`` so it can be deleted; blobs
/// never appear in a description, an error or a log line; a participant's changes commit with
/// the write or not at all.
public protocol KeyItemStore: Sendable {
    /// The keys matching `filter`, in the order they were added.
    func keys(matching filter: KeyFilter) throws(KeygateError) -> [KeyRecord]
    /// The keeper blob of a record read from this store.
    func openKey(_ record: KeyRecord) throws(KeygateError) -> SecretData
    /// Adds a key with `participant`'s changes in the same commit.
    /// - Returns: its record.
    @discardableResult
    func insertKey(_ fields: KeyFields, blob: SecretData, joining participant: (any TransactionParticipant)?)
        throws(KeygateError) -> KeyRecord
    /// Gives a key new fields, keeping its blob (sealed again for them), with `participant`'s
    /// changes in the same commit; fails when the key changed since `record` was read.
    func updateKey(_ record: KeyRecord, to fields: KeyFields, joining participant: (any TransactionParticipant)?)
        throws(KeygateError)
    /// Deletes keys as they were read, all or none, with `participant`'s changes in the same
    /// commit; records already gone are ignored.
    func deleteKeys(_ records: [KeyRecord], joining participant: (any TransactionParticipant)?)
        throws(KeygateError)
}

/// The checks every key store of this package makes on what it is given.
enum KeyRows {
    /// The most bytes of a keeper blob a store accepts (a P-256 private key in DER is ~120).
    static let maximumBlobLength = 64 << 10

    /// Refuses a blob beyond ``maximumBlobLength``.
    static func check(_ blob: SecretData, for fields: KeyFields) throws(KeygateError) {
        guard blob.count <= maximumBlobLength else {
            throw KeygateError(
                .param,
                "the keeper blob of key \(fields.auditIdentity) is \(blob.count) bytes, more than "
                    + "\(maximumBlobLength); nothing was changed")
        }
    }

    /// The refusal of a key that collides with a stored one.
    static func duplicate(_ fields: KeyFields, cause: KeygateError.Cause? = nil) -> KeygateError {
        KeygateError(
            .duplicateItem,
            "a \(fields.type) key with application label \(fields.applicationLabelHex) already exists in "
                + "\(fields.accessGroup)", cause: cause)
    }

    /// The refusal of a write to a key another writer changed since it was read.
    static func racing(_ id: ItemID, _ outcome: String) -> KeygateError {
        KeygateError(
            .notAvailable, "key \(id) was changed by another writer; \(outcome)", condition: .racingWriter)
    }
}
