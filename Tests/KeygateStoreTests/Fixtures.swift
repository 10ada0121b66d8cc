import KeygatePolicy
import KeygateStore

/// Fields and items for the store tests (the backends and temporary stores are KeygateTesting's).
enum Fixtures {
    static let now = Timestamp(seconds: 1_800_000_000)

    static func fields(
        service: String = "api", account: String = "alice", group: String = "group.a", sync: Bool = false,
        label: String? = nil, control: AccessControl = try! AccessControl(protection: .whenUnlocked)
    ) -> ItemFields {
        ItemFields(
            identity: ItemIdentity(accessGroup: group, account: account, service: service, synchronizable: sync),
            label: label, generic: nil, accessControl: control, created: now, modified: now)
    }

    static func item(_ fields: ItemFields, _ value: String) -> NewItem {
        NewItem(fields: fields, data: SecretData(value))
    }

    static func text(_ data: SecretData) -> String { data.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

    static let all = ItemFilter(accessGroups: ["group.a", "group.b"], synchronizable: nil)
}
