public import KeygatePolicy

/// How many items a search returns (`kSecMatchLimit`).
public enum MatchLimit: Hashable, Sendable {
    /// The first match (the default for reads).
    case one
    /// Every match.
    case all
    /// At most this many.
    case count(Int)
}

/// Which items a query matches on synchronizability (`kSecAttrSynchronizable`).
public enum SynchronizableMatch: Hashable, Sendable {
    /// Only items that are not synchronizable (the default, as Apple adds `sync = 0`).
    case no
    /// Only synchronizable items.
    case yes
    /// Both (`kSecAttrSynchronizableAny`).
    case any
}

/// A search for generic-password items, for ``KeychainAccess/copyMatching(_:context:)``,
/// ``KeychainAccess/update(_:changes:context:)`` and ``KeychainAccess/delete(_:context:)``.
///
/// Every attribute given must match. The result and limit keys apply to reads only: giving a
/// match limit or return keys to an update, a match limit to a delete, or `skip` to either,
/// is `errSecParam`, as Apple's `SecItemUpdate` and `SecItemDelete` say.
public struct ItemQuery: Hashable, Sendable {
    /// The service to match.
    public var service: String?
    /// The account to match.
    public var account: String?
    /// The access group to search; nil searches every group the caller may use.
    public var accessGroup: String?
    /// The label to match.
    public var label: String?
    /// The generic attribute to match.
    public var generic: [UInt8]?
    /// Which items match on synchronizability; by default only non-synchronizable ones.
    public var synchronizable: SynchronizableMatch
    /// The protection class to match.
    public var protection: ProtectionClass?
    /// How many items a read returns; nil means one. Not allowed in update or delete.
    public var matchLimit: MatchLimit?
    /// Return each item's value (asks the evaluator; may prompt).
    public var returnData: Bool
    /// Return each item's attributes (never prompts, never returns the value).
    public var returnAttributes: Bool
    /// Whether this call may prompt; nil uses the context's interaction policy.
    public var authenticationUI: InteractionPolicy?
    /// Why the user is asked, shown in the prompt.
    public var operationPrompt: String?
    /// Raw Apple attribute keys that Keygate's generic-password class does not have (for
    /// example `srvr`). Any entry is `errSecNoSuchAttr`, so code ported from SecItem
    /// dictionaries fails as it would on Apple platforms.
    public var otherAttributes: [String: String]

    /// A query; by default it matches every non-synchronizable item the caller may see.
    public init(
        service: String? = nil, account: String? = nil, accessGroup: String? = nil, label: String? = nil,
        generic: [UInt8]? = nil, synchronizable: SynchronizableMatch = .no, protection: ProtectionClass? = nil,
        matchLimit: MatchLimit? = nil, returnData: Bool = false, returnAttributes: Bool = false,
        authenticationUI: InteractionPolicy? = nil, operationPrompt: String? = nil,
        otherAttributes: [String: String] = [:]
    ) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
        self.label = label
        self.generic = generic
        self.synchronizable = synchronizable
        self.protection = protection
        self.matchLimit = matchLimit
        self.returnData = returnData
        self.returnAttributes = returnAttributes
        self.authenticationUI = authenticationUI
        self.operationPrompt = operationPrompt
        self.otherAttributes = otherAttributes
    }
}

/// How an item is protected: a protection class alone (`kSecAttrAccessible`), or an access
/// control, which carries its own class (`kSecAttrAccessControl`). Apple refuses both
/// together; one value cannot hold both.
public enum ItemProtection: Hashable, Sendable {
    /// A protection class, with no constraint.
    case accessible(ProtectionClass)
    /// An access control (its protection is the item's class).
    case accessControl(AccessControl)

    /// The access control an item with this protection gets.
    /// - Throws: `errSecParam` for a class refused for new items.
    package func accessControlValue() throws(KeygateError) -> AccessControl {
        switch self {
        case .accessible(let protection): try AccessControl(protection: protection)
        case .accessControl(let control): control
        }
    }
}

/// A new generic-password item for ``KeychainAccess/add(_:context:)``.
public struct AddRequest: Equatable, Sendable {
    /// The service.
    public var service: String
    /// The account.
    public var account: String
    /// The access group; nil puts the item in the caller's default (first) group.
    public var accessGroup: String?
    /// A label.
    public var label: String?
    /// Application-defined bytes, not secret.
    public var generic: [UInt8]?
    /// Whether the item is synchronizable.
    public var synchronizable: Bool
    /// The protection class or the access control (default: the class `whenUnlocked`).
    public var protection: ItemProtection
    /// The value.
    public var data: SecretData
    /// Whether this call may prompt; `skip` is not allowed here.
    public var authenticationUI: InteractionPolicy?
    /// Raw attribute keys Keygate does not have; any entry is `errSecNoSuchAttr`.
    public var otherAttributes: [String: String]

    /// A new item protected by a class alone (default `whenUnlocked`).
    public init(
        service: String, account: String, accessGroup: String? = nil, label: String? = nil, generic: [UInt8]? = nil,
        synchronizable: Bool = false, protection: ProtectionClass = .default, data: SecretData,
        authenticationUI: InteractionPolicy? = nil, otherAttributes: [String: String] = [:]
    ) {
        self.init(
            service: service, account: account, accessGroup: accessGroup, label: label, generic: generic,
            synchronizable: synchronizable, protection: .accessible(protection), data: data,
            authenticationUI: authenticationUI, otherAttributes: otherAttributes)
    }

    /// A new item protected by an access control (not allowed on a synchronizable item).
    public init(
        service: String, account: String, accessGroup: String? = nil, label: String? = nil, generic: [UInt8]? = nil,
        synchronizable: Bool = false, accessControl: AccessControl, data: SecretData,
        authenticationUI: InteractionPolicy? = nil, otherAttributes: [String: String] = [:]
    ) {
        self.init(
            service: service, account: account, accessGroup: accessGroup, label: label, generic: generic,
            synchronizable: synchronizable, protection: .accessControl(accessControl), data: data,
            authenticationUI: authenticationUI, otherAttributes: otherAttributes)
    }

    /// A new item with `protection`.
    public init(
        service: String, account: String, accessGroup: String? = nil, label: String? = nil, generic: [UInt8]? = nil,
        synchronizable: Bool = false, protection: ItemProtection, data: SecretData,
        authenticationUI: InteractionPolicy? = nil, otherAttributes: [String: String] = [:]
    ) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
        self.label = label
        self.generic = generic
        self.synchronizable = synchronizable
        self.protection = protection
        self.data = data
        self.authenticationUI = authenticationUI
        self.otherAttributes = otherAttributes
    }
}

/// What ``KeychainAccess/update(_:changes:context:)`` changes; nil leaves an attribute as it is.
public struct ItemChanges: Equatable, Sendable {
    /// A new service.
    public var service: String?
    /// A new account.
    public var account: String?
    /// A new access group (must be one the caller may use).
    public var accessGroup: String?
    /// A new label.
    public var label: String?
    /// New generic bytes.
    public var generic: [UInt8]?
    /// A new synchronizable flag.
    public var synchronizable: Bool?
    /// A new protection: a class (the item keeps its constraints) or an access control
    /// (bound again at the update).
    public var protection: ItemProtection?
    /// A new value.
    public var data: SecretData?
    /// Raw attribute keys Keygate does not have; any entry is `errSecNoSuchAttr`.
    public var otherAttributes: [String: String]

    /// Changes.
    public init(
        service: String? = nil, account: String? = nil, accessGroup: String? = nil, label: String? = nil,
        generic: [UInt8]? = nil, synchronizable: Bool? = nil, protection: ItemProtection? = nil,
        data: SecretData? = nil, otherAttributes: [String: String] = [:]
    ) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
        self.label = label
        self.generic = generic
        self.synchronizable = synchronizable
        self.protection = protection
        self.data = data
        self.otherAttributes = otherAttributes
    }
}

/// One item a read returned: what the query asked for.
public struct MatchedItem: Equatable, Sendable {
    /// The attributes, when the query asked for them.
    public let attributes: ItemAttributes?
    /// The value, when the query asked for it.
    public let data: SecretData?

    /// A matched item (a client rebuilds the daemon's reply this way).
    public init(attributes: ItemAttributes?, data: SecretData?) {
        self.attributes = attributes
        self.data = data
    }
}
