public import KeygatePolicy

/// A request to make a key inside the keeper (`SecKeyCreateRandomKey` with a token id), or to
/// hand it a private key made elsewhere (`keygate key import`).
public struct NewKeyRequest: Hashable, Sendable {
    /// The key's type.
    public var type: KeyType
    /// A label (`kSecAttrLabel`).
    public var label: String?
    /// Application-defined bytes (`kSecAttrApplicationTag`).
    public var applicationTag: [UInt8]
    /// The access group; nil puts the key in the caller's default (first) group.
    public var accessGroup: String?
    /// The protection class, or an access control: operations need `privateKeyUsage` as soon
    /// as any constraint is given (spec 9.5.5).
    public var protection: ItemProtection
    /// Whether the key should be synchronizable: refused for keeper keys (`errSecParam`,
    /// spec 9.11.5).
    public var synchronizable: Bool

    /// A request; by default `WhenUnlockedThisDeviceOnly` with no constraint (every use allowed
    /// while unlocked, spec 9.5.4).
    public init(
        type: KeyType, label: String? = nil, applicationTag: [UInt8] = [], accessGroup: String? = nil,
        protection: ItemProtection = .accessible(.whenUnlockedThisDeviceOnly), synchronizable: Bool = false
    ) {
        self.type = type
        self.label = label
        self.applicationTag = applicationTag
        self.accessGroup = accessGroup
        self.protection = protection
        self.synchronizable = synchronizable
    }
}

/// Which keys a key call acts on: every given condition must hold.
public struct KeyQuery: Hashable, Sendable {
    /// The label must equal this.
    public var label: String?
    /// The application tag must equal this.
    public var applicationTag: [UInt8]?
    /// The application label must equal this.
    public var applicationLabel: [UInt8]?
    /// The type must equal this.
    public var type: KeyType?
    /// The access group; nil searches every group the caller may use.
    public var accessGroup: String?
    /// The text shown to the user when a use needs a proof (`kSecUseOperationPrompt`).
    public var operationPrompt: String?
    /// Whether a use may ask the user (`kSecUseAuthenticationUI`); `skip` is refused for uses.
    public var authenticationUI: InteractionPolicy?

    /// A query.
    public init(
        label: String? = nil, applicationTag: [UInt8]? = nil, applicationLabel: [UInt8]? = nil, type: KeyType? = nil,
        accessGroup: String? = nil, operationPrompt: String? = nil, authenticationUI: InteractionPolicy? = nil
    ) {
        self.label = label
        self.applicationTag = applicationTag
        self.applicationLabel = applicationLabel
        self.type = type
        self.accessGroup = accessGroup
        self.operationPrompt = operationPrompt
        self.authenticationUI = authenticationUI
    }

    /// The conditions as a not-found message names them.
    public var summary: String {
        var parts: [String] = []
        if let label { parts.append("label '\(label)'") }
        if let applicationLabel { parts.append("application label \(Hex.string(applicationLabel))") }
        if let type { parts.append("type \(type)") }
        if let accessGroup { parts.append("group '\(accessGroup)'") }
        return parts.isEmpty ? "any key" : parts.joined(separator: ", ")
    }
}

/// Changes to keys' attributes (`SecItemUpdate` of a key row: never authenticates, spec 9.6).
/// The type, the public key and the access control are fixed at creation.
public struct KeyChanges: Hashable, Sendable {
    /// A new label, when set.
    public var label: String?
    /// A new application tag, when set.
    public var applicationTag: [UInt8]?

    /// Changes.
    public init(label: String? = nil, applicationTag: [UInt8]? = nil) {
        self.label = label
        self.applicationTag = applicationTag
    }
}
