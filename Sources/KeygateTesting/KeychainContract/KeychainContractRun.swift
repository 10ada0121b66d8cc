import Keygate
import KeygatePolicy
import KeygateStore

/// One run of ``KeychainContract``: the failures found, fresh group names per case, and the
/// helpers the cases share. Used from one task.
final class KeychainContractRun {
    typealias Case = KeychainContract.Case

    private(set) var failures: [KeychainContract.Failure] = []
    private let makeKeychain: ([String]) async throws -> any KeychainAccess
    /// A token making this run's group names its own (a daemon's store outlives a run).
    private let token = UInt32.random(in: 0...UInt32.max)
    private var number = 0

    init(makeKeychain: @escaping ([String]) async throws -> any KeychainAccess) {
        self.makeKeychain = makeKeychain
    }

    func fail(_ broken: Case, _ message: String) {
        failures.append(KeychainContract.Failure(broken: broken, message: message))
    }

    func expect(_ condition: Bool, _ broken: Case, _ message: @autoclosure () -> String) {
        if !condition { fail(broken, message()) }
    }

    /// Runs one case on fresh groups.
    func check(_ item: Case) async {
        number += 1
        let groups = ["contract.\(token).\(number).app", "contract.\(token).\(number).shared"]
        do {
            let keychain = try await makeKeychain(groups)
            switch item {
            case .addAndRead: await checkAddAndRead(keychain)
            case .duplicateAdd: await checkDuplicateAdd(keychain)
            case .matchLimits: await checkMatchLimits(keychain)
            case .synchronizable: await checkSynchronizable(keychain)
            case .update: await checkUpdate(keychain)
            case .delete: await checkDelete(keychain)
            case .notFound: await checkNotFound(keychain)
            case .invalidRequests: await checkInvalidRequests(keychain)
            case .entitlements: await checkEntitlements(keychain, groups: groups)
            case .noPromptNoValue: await checkNoPromptNoValue(keychain)
            case .credentialStore: await checkCredentialStore(keychain, groups: groups)
            }
        } catch {
            fail(item, "could not make a keychain to check: \(error)")
        }
    }

    /// A keychain for other groups, or nil after recording why none could be made.
    func otherKeychain(_ item: Case, groups: [String]) async -> (any KeychainAccess)? {
        do {
            return try await makeKeychain(groups)
        } catch {
            fail(item, "could not make a keychain for \(groups): \(error)")
            return nil
        }
    }

    /// The value text the contract stores for `name`.
    static func value(_ name: String) -> SecretData { SecretData("\(KeychainContract.secretMarker)-\(name)") }

    /// The name a stored value was made from, nil for none or a foreign value.
    static func name(_ data: SecretData?) -> String? {
        guard let data else { return nil }
        let text = data.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        let prefix = "\(KeychainContract.secretMarker)-"
        return text.hasPrefix(prefix) ? String(text.dropFirst(prefix.count)) : "<a value the contract did not store>"
    }

    /// `body`'s result, or nil after recording that `what` failed.
    func attempt<T>(_ item: Case, _ what: String, _ body: () async throws -> T) async -> T? {
        do {
            return try await body()
        } catch let error as KeygateError {
            fail(item, "\(what) failed: \(error.status) \(error.message)")
        } catch {
            fail(item, "\(what) failed: \(error)")
        }
        return nil
    }

    /// Records a failure unless `body` throws `status`.
    func expectFailure(_ item: Case, _ status: KeygateStatus, _ what: String, _ body: () async throws -> Void) async {
        do {
            try await body()
            fail(item, "\(what) succeeded; it must fail with \(status)")
        } catch let error as KeygateError {
            expect(error.status == status, item, "\(what) failed with \(error.status); it must fail with \(status)")
            expect(
                !error.message.contains(KeychainContract.secretMarker), item, "\(what): the error message shows a value"
            )
        } catch {
            fail(item, "\(what) threw \(error), not a KeygateError")
        }
    }

    /// Adds a plain item `name` for `account` (service `api` unless given).
    func add(
        _ keychain: any KeychainAccess, _ item: Case, account: String, name: String, service: String = "api",
        group: String? = nil, sync: Bool = false, label: String? = nil, generic: [UInt8]? = nil
    ) async {
        _ = await attempt(item, "adding '\(account)' to service '\(service)'") {
            try await keychain.add(
                AddRequest(
                    service: service, account: account, accessGroup: group, label: label, generic: generic,
                    synchronizable: sync, data: Self.value(name)),
                context: nil)
        }
    }

    /// The names of the values `query` reads (all matches), nil after recording a failure.
    func names(_ keychain: any KeychainAccess, _ item: Case, _ query: ItemQuery, _ what: String) async -> [String]? {
        var query = query
        query.returnData = true
        if query.matchLimit == nil { query.matchLimit = .all }
        let found = await attempt(item, what) { try await keychain.copyMatching(query, context: nil) }
        return found?.map { Self.name($0.data) ?? "<no value>" }
    }

    /// Checks that `query` reads exactly `expected` (value names, in order).
    func expectNames(
        _ keychain: any KeychainAccess, _ item: Case, _ query: ItemQuery, _ expected: [String], _ what: String
    ) async {
        guard let found = await names(keychain, item, query, what) else { return }
        expect(found == expected, item, "\(what) read the values \(found); expected \(expected)")
    }
}
