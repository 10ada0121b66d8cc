import KeygatePolicy
import KeygateStore

/// The items ``ItemStoreContract`` stores: fields built from a few names, and values that all
/// contain ``ItemStoreContract/secretMarker``.
enum ContractItems {
    static let created = Timestamp(seconds: 1_800_000_000)
    static let groups = ["group.a", "group.b"]
    /// Every item the suite stores, whatever its group or sync flag.
    static let everything = ItemFilter(accessGroups: groups, synchronizable: nil)

    static func fields(
        _ account: String, service: String = "api", group: String = "group.a", sync: Bool = false,
        label: String? = nil, generic: [UInt8]? = nil, control: AccessControl = plain
    ) -> ItemFields {
        ItemFields(
            identity: ItemIdentity(accessGroup: group, account: account, service: service, synchronizable: sync),
            label: label, generic: generic, accessControl: control, created: created, modified: created)
    }

    static let plain = try! AccessControl(protection: .whenUnlocked)

    /// The stored text for `name`: it contains the secret marker.
    static func value(_ name: String) -> String { "\(ItemStoreContract.secretMarker)-\(name)" }

    static func item(_ fields: ItemFields, _ name: String) -> NewItem {
        NewItem(fields: fields, data: SecretData(value(name)))
    }

    static func item(_ account: String, _ name: String) -> NewItem { item(fields(account), name) }

    static func text(_ data: SecretData) -> String { data.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
}
