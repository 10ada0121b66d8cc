public import KeygatePolicy

/// Everything about a key item except its private half (spec §9.4): what a store keeps beside
/// the keeper's blob, and what a query of keys returns.
///
/// A key item is found by its access group, label, application tag, application label and type;
/// its private half is used only through the keeper that made it, after the key's access
/// control allows the operation (`osgn`, `ock`).
public struct KeyFields: Hashable, Sendable {
    /// The access group the key belongs to.
    public var accessGroup: String
    /// A user-visible label (`kSecAttrLabel`); Keygate's command line finds keys by it.
    public var label: String?
    /// Application-defined bytes (`kSecAttrApplicationTag`), empty when none.
    public var applicationTag: [UInt8]
    /// The SHA-1 of the public key's external representation (`kSecAttrApplicationLabel`,
    /// spec 9.4.3): fixed when the key is made.
    public var applicationLabel: [UInt8]
    /// The key's type (`kSecAttrKeyType`); its size is the type's.
    public var type: KeyType
    /// The keeper holding the private half (`kSecAttrTokenID`).
    public var tokenID: String
    /// Whether the private half was imported (made outside the keeper) rather than generated
    /// inside it: an imported key's private half existed elsewhere before.
    public var imported: Bool
    /// The public half's external representation: X9.63 `04‖X‖Y` for P-256, the 32 raw bytes
    /// for Ed25519.
    public var publicKey: [UInt8]
    /// The protection class and constraints, bound at creation.
    public var accessControl: AccessControl
    /// When the key was made.
    public var created: Timestamp
    /// When its attributes last changed.
    public var modified: Timestamp

    /// The fields of a key.
    public init(
        accessGroup: String, label: String?, applicationTag: [UInt8] = [], applicationLabel: [UInt8], type: KeyType,
        tokenID: String, imported: Bool = false, publicKey: [UInt8], accessControl: AccessControl,
        created: Timestamp, modified: Timestamp
    ) {
        self.accessGroup = accessGroup
        self.label = label
        self.applicationTag = applicationTag
        self.applicationLabel = applicationLabel
        self.type = type
        self.tokenID = tokenID
        self.imported = imported
        self.publicKey = publicKey
        self.accessControl = accessControl
        self.created = created
        self.modified = modified
    }

    /// `kSecAttrKeySizeInBits`: the type's.
    public var sizeInBits: Int { type.sizeInBits }

    /// The application label as lowercase hex.
    public var applicationLabelHex: String { Hex.string(applicationLabel) }

    /// The identity the audit trail and organisation rules know the key by: its access group,
    /// its label as the service and its application label (hex) as the account, so a record
    /// names which key was used and a rule's `label` or `service` selector can name keys.
    public var auditIdentity: ItemIdentity {
        ItemIdentity(accessGroup: accessGroup, account: applicationLabelHex, service: label ?? "")
    }
}

/// Which key items a search returns: every given condition must hold.
public struct KeyFilter: Hashable, Sendable {
    /// The key must be in one of these access groups (empty matches nothing).
    public var accessGroups: [String]
    /// The label must equal this.
    public var label: String?
    /// The application tag must equal this.
    public var applicationTag: [UInt8]?
    /// The application label must equal this.
    public var applicationLabel: [UInt8]?
    /// The type must equal this.
    public var type: KeyType?

    /// A filter.
    public init(
        accessGroups: [String], label: String? = nil, applicationTag: [UInt8]? = nil,
        applicationLabel: [UInt8]? = nil, type: KeyType? = nil
    ) {
        self.accessGroups = accessGroups
        self.label = label
        self.applicationTag = applicationTag
        self.applicationLabel = applicationLabel
        self.type = type
    }

    /// Whether `fields` match; names are compared byte for byte.
    public func matches(_ fields: KeyFields) -> Bool {
        accessGroups.contains { $0.sameBytes(as: fields.accessGroup) }
            && (label.map { label in fields.label.map { label.sameBytes(as: $0) } ?? false } ?? true)
            && (applicationTag.map { $0 == fields.applicationTag } ?? true)
            && (applicationLabel.map { $0 == fields.applicationLabel } ?? true)
            && (type.map { $0 == fields.type } ?? true)
    }
}
