public import KeygateItems
public import KeygatePolicy

/// A backend's handle for one stored item.
public struct ItemID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The backend's number for the item.
    public let rawValue: Int64
    /// Wraps a number.
    public init(_ rawValue: Int64) { self.rawValue = rawValue }
    /// Orders by number (the order items were added in).
    public static func < (lhs: ItemID, rhs: ItemID) -> Bool { lhs.rawValue < rhs.rawValue }
    /// The number.
    public var description: String { "#\(rawValue)" }
}

/// One stored item as read: its fields and its sealed value, from one consistent read.
///
/// The value can only be had through ``ItemStore/open(_:)``, which checks that it belongs to
/// exactly these fields (a value moved to another row, or a row whose access control was
/// edited, does not open).
public struct ItemRecord: Hashable, Sendable {
    /// The backend's handle.
    public let id: ItemID
    /// The fields.
    public let fields: ItemFields
    /// The sealed value, opaque outside the backend.
    package let sealed: SealedValue
    /// Why the stored row cannot be trusted (its access-control columns do not parse or
    /// disagree), or nil. A damaged item can be deleted; reading or updating it is `errSecDecode`.
    public let damage: String?

    package init(id: ItemID, fields: ItemFields, sealed: SealedValue, damage: String? = nil) {
        self.id = id
        self.fields = fields
        self.sealed = sealed
        self.damage = damage
    }

    /// A record of a backend outside this package: `sealed` is that backend's own form of the
    /// value (a ciphertext, a version stamp), which only it can open.
    public init(id: ItemID, fields: ItemFields, sealed: [UInt8], damage: String? = nil) {
        self.init(id: id, fields: fields, sealed: .external(sealed), damage: damage)
    }

    /// The bytes a backend outside this package made the record with
    /// (``init(id:fields:sealed:damage:)``); nil for this package's backends.
    public var sealedBytes: [UInt8]? {
        if case .external(let bytes) = sealed { bytes } else { nil }
    }
}

/// A value as a backend keeps it.
package enum SealedValue: Hashable, Sendable {
    /// In memory, not encrypted (``InMemoryItemStore``), with the fields it was stored with: it
    /// opens only for exactly those. Boxed, so the fields do not make every record (the SQLite
    /// store's too) the size of two sets of fields: a list holds hundreds of thousands.
    indirect case plain(SecretData, fields: ItemFields)
    /// XChaCha20-Poly1305 ciphertext and its nonce (``SQLiteItemStore``), with the
    /// access-control text the row holds and its parse: what the value's associated data binds,
    /// so opening it needs nothing the read did not carry (no text is rendered or looked up
    /// again); nil for a record read without its access control (a damaged row).
    case encrypted(nonce: [UInt8], ciphertext: [UInt8], stored: StoredAccessControl?)
    /// A backend outside this package: its own bytes.
    case external([UInt8])

    package static func == (lhs: SealedValue, rhs: SealedValue) -> Bool {
        switch (lhs, rhs) {
        case (.plain(let a, let f1), .plain(let b, let f2)): a === b && f1 == f2
        case (.encrypted(let n1, let c1, _), .encrypted(let n2, let c2, _)): n1 == n2 && c1 == c2
        case (.external(let a), .external(let b)): a == b
        default: false
        }
    }

    package func hash(into hasher: inout Hasher) {
        switch self {
        case .plain(let data, _): hasher.combine(ObjectIdentifier(data))
        case .encrypted(let nonce, _, _): hasher.combine(nonce)
        case .external(let bytes): hasher.combine(bytes)
        }
    }
}

/// A new item for ``ItemStore/insert(_:joining:)``.
public struct NewItem: Sendable {
    /// Its fields.
    public var fields: ItemFields
    /// Its secret value.
    public var data: SecretData

    /// A new item.
    public init(fields: ItemFields, data: SecretData) {
        self.fields = fields
        self.data = data
    }
}

/// A replacement of an existing item's fields and value, for ``ItemStore/replace(_:joining:)``.
public struct ItemReplacement: Sendable {
    /// The item replaced.
    public var id: ItemID
    /// Its new fields.
    public var fields: ItemFields
    /// Its value (re-sealed for the new fields).
    public var data: SecretData
    /// The item as it was read, when the replacement must fail if it changed since.
    package var expected: SealedValue?

    /// A replacement of the item `id`, whatever it holds now.
    public init(id: ItemID, fields: ItemFields, data: SecretData) {
        self.id = id
        self.fields = fields
        self.data = data
    }

    /// A replacement of `record` that fails if another writer changed the item since it was read.
    public init(replacing record: ItemRecord, fields: ItemFields, data: SecretData) {
        self.init(id: record.id, fields: fields, data: data)
        expected = record.sealed
    }

    /// For a backend outside this package: the ``ItemRecord/sealedBytes`` of the record this
    /// replacement was made from with ``init(replacing:fields:data:)``, which the item must
    /// still hold for the replacement to apply; nil for an unconditional replacement.
    public var expectedSealedBytes: [UInt8]? {
        if case .external(let bytes)? = expected { bytes } else { nil }
    }
}

/// Which items a search returns: every given condition must hold.
public struct ItemFilter: Hashable, Sendable {
    /// The item must be in one of these access groups (empty matches nothing).
    public var accessGroups: [String]
    /// The service must equal this.
    public var service: String?
    /// The account must equal this.
    public var account: String?
    /// The label must equal this.
    public var label: String?
    /// The generic attribute must equal this.
    public var generic: [UInt8]?
    /// Synchronizable must equal this; nil matches both.
    public var synchronizable: Bool?
    /// The protection class must equal this.
    public var protection: ProtectionClass?
    /// When set, the records found carry no sealed value (a search for attributes only, such
    /// as a list): a store may leave the value unread, and opening or verifying such a record
    /// fails with `errSecDecode`. A store that reads values anyway returns them.
    public var withoutValues = false

    /// A filter.
    public init(
        accessGroups: [String], service: String? = nil, account: String? = nil, label: String? = nil,
        generic: [UInt8]? = nil, synchronizable: Bool? = false, protection: ProtectionClass? = nil
    ) {
        self.accessGroups = accessGroups
        self.service = service
        self.account = account
        self.label = label
        self.generic = generic
        self.synchronizable = synchronizable
        self.protection = protection
    }

    /// Whether `fields` match; names are compared byte for byte, as SQLite compares them.
    public func matches(_ fields: ItemFields) -> Bool {
        accessGroups.contains { $0.sameBytes(as: fields.identity.accessGroup) }
            && (service.map { $0.sameBytes(as: fields.identity.service) } ?? true)
            && (account.map { $0.sameBytes(as: fields.identity.account) } ?? true)
            && (label.map { label in fields.label.map { label.sameBytes(as: $0) } ?? false } ?? true)
            && (generic.map { $0 == fields.generic } ?? true)
            && (synchronizable.map { $0 == fields.identity.synchronizable } ?? true)
            && (protection.map { $0 == fields.accessControl.protection } ?? true)
    }
}
