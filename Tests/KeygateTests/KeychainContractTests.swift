import Keygate
import KeygatePolicy
import KeygateStore
import KeygateTesting
import Testing

/// The embedded keychain honours the contract KeygateTesting ships for every KeychainAccess
/// (KeygatedTests runs the same contract through KeygateClient against a real keygated), and
/// the contract catches a keychain that breaks a case.
@Suite struct KeychainContractTests {
    /// An embedded keychain over a fresh store, on an unlocked device with a passcode.
    static func keychain(_ backend: Backend, groups: [String]) throws -> Keychain {
        Keychain(
            store: try TemporaryStore(backend), accessGroups: groups, authenticator: ScriptedAuthenticator(),
            device: SimulatedDevice(enrolled: ["right-index"]))
    }

    @Test(arguments: Backend.allCases)
    func theEmbeddedKeychainHonoursTheContract(_ backend: Backend) async {
        let failures = await KeychainContract.check { groups in try Self.keychain(backend, groups: groups) }
        #expect(failures.isEmpty, "\(failures.map(\.description).joined(separator: "\n"))")
    }

    /// Wraps a keychain and breaks one behaviour.
    struct Faulty: KeychainAccess {
        enum Fault: Sendable { case addOverwrites, missingReadsEmpty }
        let inner: Keychain
        let fault: Fault
        var accessGroups: [String] { inner.accessGroups }

        func add(_ request: AddRequest, context: AuthenticationContext?) async throws(KeygateError) {
            do {
                try await inner.add(request, context: context)
            } catch  where fault == .addOverwrites && error.status == .duplicateItem {
                try await inner.update(
                    ItemQuery(service: request.service, account: request.account, accessGroup: request.accessGroup),
                    changes: ItemChanges(data: request.data), context: context)
            }
        }

        func copyMatching(_ query: ItemQuery, context: AuthenticationContext?) async throws(KeygateError)
            -> [MatchedItem]
        {
            do {
                return try await inner.copyMatching(query, context: context)
            } catch  where fault == .missingReadsEmpty && error.status == .itemNotFound {
                return []
            }
        }

        func update(_ query: ItemQuery, changes: ItemChanges, context: AuthenticationContext?)
            async throws(KeygateError)
        {
            try await inner.update(query, changes: changes, context: context)
        }

        func delete(_ query: ItemQuery, context: AuthenticationContext?) async throws(KeygateError) {
            try await inner.delete(query, context: context)
        }

        func createKey(_ request: NewKeyRequest, context: AuthenticationContext?) async throws(KeygateError)
            -> KeyFields
        {
            try await inner.createKey(request, context: context)
        }

        func importKey(_ request: NewKeyRequest, privateKey: SecretData, context: AuthenticationContext?)
            async throws(KeygateError) -> KeyFields
        {
            try await inner.importKey(request, privateKey: privateKey, context: context)
        }

        func keys(matching query: KeyQuery) async throws(KeygateError) -> [KeyFields] {
            try await inner.keys(matching: query)
        }

        func updateKeys(_ query: KeyQuery, changes: KeyChanges) async throws(KeygateError) {
            try await inner.updateKeys(query, changes: changes)
        }

        func deleteKeys(_ query: KeyQuery) async throws(KeygateError) { try await inner.deleteKeys(query) }

        func sign(
            _ input: [UInt8], algorithm: SignatureAlgorithm, key query: KeyQuery, context: AuthenticationContext?
        ) async throws(KeygateError) -> [UInt8] {
            try await inner.sign(input, algorithm: algorithm, key: query, context: context)
        }

        func sharedSecret(withPeer peer: [UInt8], key query: KeyQuery, context: AuthenticationContext?)
            async throws(KeygateError) -> SecretData
        {
            try await inner.sharedSecret(withPeer: peer, key: query, context: context)
        }

        func decrypt(
            _ message: [UInt8], algorithm: ECIESAlgorithm, key query: KeyQuery, context: AuthenticationContext?
        ) async throws(KeygateError) -> SecretData {
            try await inner.decrypt(message, algorithm: algorithm, key: query, context: context)
        }
    }

    @Test(arguments: [
        (Faulty.Fault.addOverwrites, KeychainContract.Case.duplicateAdd),
        (.missingReadsEmpty, .notFound),
    ])
    func theContractNamesTheCaseABrokenKeychainBreaks(_ fault: Faulty.Fault, _ broken: KeychainContract.Case) async {
        let failures = await KeychainContract.check([broken]) { groups in
            Faulty(inner: try Self.keychain(.inMemory, groups: groups), fault: fault)
        }
        #expect(!failures.isEmpty && failures.allSatisfy { $0.broken == broken }, "\(failures)")
        #expect(!failures.contains { $0.description.contains(KeychainContract.secretMarker) })
    }
}
