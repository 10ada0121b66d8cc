/// The primary key of a generic-password item (spec §7.1): access group, account, service
/// and whether it is synchronizable. "No account" is the empty string, itself a value.
public struct ItemIdentity: Hashable, Sendable, CustomStringConvertible {
    /// The access group the item belongs to.
    public var accessGroup: String
    /// The account (`kSecAttrAccount`), "" when none.
    public var account: String
    /// The service (`kSecAttrService`), "" when none.
    public var service: String
    /// Whether the item is synchronizable (`kSecAttrSynchronizable`).
    public var synchronizable: Bool

    /// An identity.
    public init(accessGroup: String, account: String, service: String, synchronizable: Bool = false) {
        self.accessGroup = accessGroup
        self.account = account
        self.service = service
        self.synchronizable = synchronizable
    }

    /// `service/account@group`, with `(sync)` for synchronizable items.
    public var description: String {
        "\(service)/\(account)@\(accessGroup)" + (synchronizable ? " (sync)" : "")
    }
}

extension ItemIdentity {
    /// Byte for byte, as Apple's keychain compares names: the NFC and NFD forms of one name
    /// (which Swift's `String ==` calls equal) are two identities, as they are two rows.
    public static func == (lhs: ItemIdentity, rhs: ItemIdentity) -> Bool {
        lhs.synchronizable == rhs.synchronizable && lhs.accessGroup.sameBytes(as: rhs.accessGroup)
            && lhs.account.sameBytes(as: rhs.account) && lhs.service.sameBytes(as: rhs.service)
    }

    /// Hashes the bytes, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        for part in [accessGroup, account, service] {
            hasher.combine(part.utf8.count)
            for byte in part.utf8 { hasher.combine(byte) }
        }
        hasher.combine(synchronizable)
    }
}

extension String {
    /// Equal UTF-8 bytes (no Unicode normalisation, unlike `==`).
    package func sameBytes(as other: String) -> Bool {
        let (left, right) = (utf8, other.utf8)
        return left.count == right.count && left.elementsEqual(right)
    }
}
