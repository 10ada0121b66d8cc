public import KeygatePolicy

/// Everything about an item except its secret value: what a store keeps beside the value, and
/// what a read returns as the item's attributes (``ItemAttributes``).
public struct ItemFields: Hashable, Sendable {
    /// The primary key.
    public var identity: ItemIdentity
    /// A user-visible label (`kSecAttrLabel`).
    public var label: String?
    /// Application-defined bytes (`kSecAttrGeneric`); not secret.
    public var generic: [UInt8]?
    /// The protection class and constraints, bound at add time.
    public var accessControl: AccessControl
    /// When the item was added.
    public var created: Timestamp
    /// When the item was last changed.
    public var modified: Timestamp

    /// Fields of an item.
    public init(
        identity: ItemIdentity, label: String? = nil, generic: [UInt8]? = nil, accessControl: AccessControl,
        created: Timestamp, modified: Timestamp
    ) {
        self.identity = identity
        self.label = label
        self.generic = generic
        self.accessControl = accessControl
        self.created = created
        self.modified = modified
    }
}

/// The attributes of a stored item, as a read returns them (never its value): its fields.
public typealias ItemAttributes = ItemFields
