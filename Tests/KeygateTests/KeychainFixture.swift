import Foundation
import Keygate
import KeygatePolicy
import KeygateTesting

@testable import KeygateStore

/// A keychain over a fresh store, a simulated device and a scripted authenticator.
final class KeychainFixture: @unchecked Sendable {
    /// The store, in a temporary directory it owns (released with the fixture).
    let store: TemporaryStore
    let device = SimulatedDevice(enrolled: ["right-index"])
    let authenticator = ScriptedAuthenticator()
    let clock = ManualClock()
    let keychain: Keychain
    /// The SQLite store's directory (its database is `items.db` there), nil in memory.
    var directory: String? { store.databasePath == nil ? nil : store.directory.path }

    init(_ backend: Backend, groups: [String] = ["group.app", "group.shared"], policy: (any OrganisationPolicy)? = nil)
        throws
    {
        store = try TemporaryStore(backend)
        keychain = Keychain(
            store: store, accessGroups: groups, authenticator: authenticator, device: device,
            organisationPolicy: policy ?? NoOrganisationPolicy(), clock: clock)
    }

    /// Another keychain over the fixture's store, device, authenticator and clock, for the
    /// caller's `groups`, auditing into a recorder of its own.
    func audited(groups: [String]) -> (Keychain, AuditRecorder) {
        let audit = AuditRecorder()
        let keychain = Keychain(
            store: store, accessGroups: groups, authenticator: authenticator, device: device, clock: clock,
            auditor: Auditor(sink: audit))
        return (keychain, audit)
    }

    /// A context on the fixture's clock.
    func context(reuse: Int = 0) -> AuthenticationContext {
        AuthenticationContext(state: AuthenticationState(reuseSeconds: reuse), clock: clock)
    }

    /// Runs `sql` on the SQLite store's database file directly, as someone with write access to
    /// the file but not the key would.
    func editDatabase(_ sql: String) throws {
        guard let directory else { throw KeygateError(.param, "the store in memory has no database file") }
        try SQLiteConnection(path: directory + "/items.db", busyTimeoutMilliseconds: 1000).execute(sql)
    }

    /// How many rows the store holds, whatever their group or sync flag.
    func rows() throws -> Int {
        try store.items(
            matching: ItemFilter(accessGroups: ["group.app", "group.shared", "group.other"], synchronizable: nil)
        ).count
    }
}

func text(_ data: SecretData?) -> String? { data?.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
