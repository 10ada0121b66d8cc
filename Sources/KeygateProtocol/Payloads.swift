public import KeygatePolicy

/// Which items a query matches on synchronizability (the facade's `SynchronizableMatch`).
public enum WireSynchronizable: UInt8, Sendable, Hashable {
    /// Only non-synchronizable items.
    case no = 0
    /// Only synchronizable items.
    case yes = 1
    /// Both.
    case any = 2
}

/// How many items a read returns (the facade's `MatchLimit`).
public enum WireMatchLimit: Sendable, Hashable {
    /// The first match.
    case one
    /// Every match.
    case all
    /// At most this many (1 or more).
    case count(UInt32)
}

/// An item's protection: a class alone or an access control (the facade's `ItemProtection`).
public enum WireProtection: Sendable, Hashable {
    /// A protection class.
    case accessible(ProtectionClass)
    /// An access control, sent in its text form and parsed on decode.
    case accessControl(AccessControl)
}

/// A query (the facade's `ItemQuery`), for copyMatching, update and delete.
public struct QueryPayload: Sendable, Hashable {
    /// The service to match.
    public var service: String?
    /// The account to match.
    public var account: String?
    /// The access group to search.
    public var accessGroup: String?
    /// The label to match.
    public var label: String?
    /// The generic attribute to match.
    public var generic: [UInt8]?
    /// Synchronizability to match.
    public var synchronizable: WireSynchronizable
    /// The protection class to match.
    public var protection: ProtectionClass?
    /// How many items a read returns.
    public var matchLimit: WireMatchLimit?
    /// Return values.
    public var returnData: Bool
    /// Return attributes.
    public var returnAttributes: Bool
    /// Whether the call may prompt.
    public var authenticationUI: InteractionPolicy?
    /// The prompt's reason.
    public var operationPrompt: String?
    /// Attribute keys Keygate does not have (refused by the facade, as embedded).
    public var otherAttributes: [String: String]

    /// A query; by default it matches every non-synchronizable item.
    public init(
        service: String? = nil, account: String? = nil, accessGroup: String? = nil, label: String? = nil,
        generic: [UInt8]? = nil, synchronizable: WireSynchronizable = .no, protection: ProtectionClass? = nil,
        matchLimit: WireMatchLimit? = nil, returnData: Bool = false, returnAttributes: Bool = false,
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

/// A new item (the facade's `AddRequest`).
public struct AddPayload: Sendable, Equatable {
    /// The service.
    public var service: String
    /// The account.
    public var account: String
    /// The access group; nil: the caller's default.
    public var accessGroup: String?
    /// A label.
    public var label: String?
    /// Generic bytes.
    public var generic: [UInt8]?
    /// Synchronizable.
    public var synchronizable: Bool
    /// The protection.
    public var protection: WireProtection
    /// The value.
    public var data: SecretBytes
    /// Whether the call may prompt.
    public var authenticationUI: InteractionPolicy?
    /// Attribute keys Keygate does not have.
    public var otherAttributes: [String: String]

    /// A new item.
    public init(
        service: String, account: String, accessGroup: String? = nil, label: String? = nil, generic: [UInt8]? = nil,
        synchronizable: Bool = false, protection: WireProtection = .accessible(.default), data: SecretBytes,
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

/// What an update changes (the facade's `ItemChanges`); nil leaves an attribute as it is.
public struct ChangesPayload: Sendable, Equatable {
    /// A new service.
    public var service: String?
    /// A new account.
    public var account: String?
    /// A new access group.
    public var accessGroup: String?
    /// A new label.
    public var label: String?
    /// New generic bytes.
    public var generic: [UInt8]?
    /// A new synchronizable flag.
    public var synchronizable: Bool?
    /// A new protection.
    public var protection: WireProtection?
    /// A new value.
    public var data: SecretBytes?
    /// Attribute keys Keygate does not have.
    public var otherAttributes: [String: String]

    /// Changes.
    public init(
        service: String? = nil, account: String? = nil, accessGroup: String? = nil, label: String? = nil,
        generic: [UInt8]? = nil, synchronizable: Bool? = nil, protection: WireProtection? = nil,
        data: SecretBytes? = nil, otherAttributes: [String: String] = [:]
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

/// A stored item's attributes (the facade's `ItemAttributes`; never its value).
public struct AttributesPayload: Sendable, Hashable {
    /// The service.
    public var service: String
    /// The account.
    public var account: String
    /// The access group.
    public var accessGroup: String
    /// Synchronizable.
    public var synchronizable: Bool
    /// The label.
    public var label: String?
    /// The generic bytes.
    public var generic: [UInt8]?
    /// The access control.
    public var accessControl: AccessControl
    /// When it was added.
    public var created: Timestamp
    /// When it was last changed.
    public var modified: Timestamp

    /// Attributes.
    public init(
        service: String, account: String, accessGroup: String, synchronizable: Bool, label: String?,
        generic: [UInt8]?, accessControl: AccessControl, created: Timestamp, modified: Timestamp
    ) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
        self.synchronizable = synchronizable
        self.label = label
        self.generic = generic
        self.accessControl = accessControl
        self.created = created
        self.modified = modified
    }
}

/// One matched item: what the query asked for.
public struct ItemPayload: Sendable, Equatable {
    /// The attributes, when asked for.
    public var attributes: AttributesPayload?
    /// The value, when asked for.
    public var data: SecretBytes?

    /// A matched item.
    public init(attributes: AttributesPayload?, data: SecretBytes?) {
        self.attributes = attributes
        self.data = data
    }
}

/// The daemon's view of a connection.
public struct StatusPayload: Sendable, Hashable {
    /// "daemon".
    public var mode: String
    /// The caller's uid, from the kernel.
    public var uid: UInt32
    /// The caller's gid, from the kernel.
    public var gid: UInt32
    /// The caller's pid, from the kernel (pinned by a pidfd).
    public var pid: Int32
    /// The caller's executable, from `/proc/<pid>/exe` checked against the pidfd ("" when unknown).
    public var executable: String
    /// The daemon's version.
    public var daemonVersion: String
    /// How the pidfd was obtained: "SO_PEERPIDFD" or "pidfd_open".
    public var pidfdSource: String

    /// A status.
    public init(
        mode: String, uid: UInt32, gid: UInt32, pid: Int32, executable: String, daemonVersion: String,
        pidfdSource: String
    ) {
        self.mode = mode
        self.uid = uid
        self.gid = gid
        self.pid = pid
        self.executable = executable
        self.daemonVersion = daemonVersion
        self.pidfdSource = pidfdSource
    }
}

/// How a relayed PAM message is shown (PAM's `msg_style`).
public enum PromptStyle: UInt8, Sendable, Hashable {
    /// Ask, without echo (a password).
    case echoOff = 1
    /// Ask, with echo.
    case echoOn = 2
    /// Show an error; no answer.
    case errorMessage = 3
    /// Show information; no answer.
    case textInfo = 4
}
