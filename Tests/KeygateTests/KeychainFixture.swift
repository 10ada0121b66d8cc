import Foundation
import Keygate
import KeygatePolicy
import KeygateStore
import KeygateTesting

/// The backends the facade tests run on.
enum Backend: String, CaseIterable, Sendable, CustomStringConvertible {
    case inMemory, sqlite
    var description: String { rawValue }
}

/// A keychain over a fresh store, a simulated device and a scripted authenticator.
final class KeychainFixture: @unchecked Sendable {
    let store: any ItemStore
    let device = SimulatedDevice(enrolled: ["right-index"])
    let authenticator = ScriptedAuthenticator()
    let clock = ManualClock()
    let keychain: Keychain
    let directory: String?

    init(_ backend: Backend, groups: [String] = ["group.app", "group.shared"], policy: (any OrganisationPolicy)? = nil)
        throws
    {
        switch backend {
        case .inMemory:
            store = InMemoryItemStore()
            directory = nil
        case .sqlite:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(
                "keygate-facade-\(UUID().uuidString)"
            ).path
            directory = path
            store = try SQLiteItemStore(path: path + "/items.db")
        }
        keychain = Keychain(
            store: store, accessGroups: groups, authenticator: authenticator, device: device,
            organisationPolicy: policy ?? NoOrganisationPolicy(), clock: clock)
    }

    deinit { if let directory { try? FileManager.default.removeItem(atPath: directory) } }

    /// A context on the fixture's clock.
    func context(reuse: Int = 0) -> AuthenticationContext {
        AuthenticationContext(state: AuthenticationState(reuseSeconds: reuse), clock: clock)
    }

    /// How many rows the store holds, whatever their group or sync flag.
    func rows() throws -> Int {
        try store.items(
            matching: ItemFilter(accessGroups: ["group.app", "group.shared", "group.other"], synchronizable: nil)
        ).count
    }
}

func text(_ data: SecretData?) -> String? { data?.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
