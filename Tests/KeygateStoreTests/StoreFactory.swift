import Foundation
import KeygatePolicy
import KeygateStore

/// The backends every contract test runs against, each made fresh per test.
enum Backend: String, CaseIterable, Sendable, CustomStringConvertible {
    case inMemory
    case sqlite

    var description: String { rawValue }

    /// A fresh store and, for SQLite, the directory holding it (removed when released).
    func make() throws -> (store: any ItemStore, directory: TemporaryDirectory?) {
        switch self {
        case .inMemory: return (InMemoryItemStore(), nil)
        case .sqlite:
            let directory = try TemporaryDirectory()
            return (try SQLiteItemStore(path: directory.path + "/db/items.db"), directory)
        }
    }
}

/// A temporary directory removed when the value is released.
final class TemporaryDirectory: Sendable {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("keygate-store-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

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
