import Keygate
import KeygatePolicy
import KeygateStore
import KeygateTesting
import Testing

/// The classic keychain-wrapper scenario, on every backend.
@Suite struct CredentialStoreTests {
    @Test(arguments: Backend.allCases)
    func classicScenario(_ backend: Backend) async throws {
        let fixture = try KeychainFixture(backend)
        let credentials = CredentialStore(keychain: fixture.keychain, service: "demo")
        #expect(try await credentials.read(account: "user") == nil, "read before save → nil")
        try await credentials.save(SecretData("demo-one"), account: "user")
        #expect(text(try await credentials.read(account: "user")) == "demo-one")
        try await credentials.save(SecretData("demo-two"), account: "user")
        #expect(text(try await credentials.read(account: "user")) == "demo-two", "replaced")
        #expect(try fixture.rows() == 1, "still one item")
        try await credentials.delete(account: "user")
        try await credentials.delete(account: "user")
        #expect(try await credentials.read(account: "user") == nil)
        #expect(try fixture.rows() == 0)
    }

    @Test(arguments: Backend.allCases)
    func readThrowsEverythingButNotFound(_ backend: Backend) async throws {
        let fixture = try KeychainFixture(backend)
        let credentials = CredentialStore(keychain: fixture.keychain, service: "demo")
        try await credentials.save(SecretData("v"), account: "user")
        fixture.device.lock()
        do {
            _ = try await credentials.read(account: "user")
            Issue.record("a locked read must throw, not return nil")
        } catch {
            #expect(error.status == .interactionNotAllowed)
        }
        fixture.device.unlock()
        #expect(text(try await credentials.read(account: "user")) == "v", "after unlock the data is still there")
    }

    @Test(arguments: Backend.allCases)
    func saveAddsProtectedItemsAndUpdatesThemAfterAProof(_ backend: Backend) async throws {
        let fixture = try KeychainFixture(backend)
        let presence = try AccessControl(protection: .whenUnlockedThisDeviceOnly, flags: .userPresence)
        let credentials = CredentialStore(keychain: fixture.keychain, service: "api", accessControl: presence)
        try await credentials.save(SecretData("t1"), account: "me")
        #expect(fixture.authenticator.prompts.isEmpty, "adding needs no prompt")
        try await credentials.save(SecretData("t2"), account: "me")
        #expect(fixture.authenticator.prompts.count == 1, "updating a protected item asks once")
        #expect(text(try await credentials.read(account: "me")) == "t2")
    }
}

/// A store whose first update pretends another process added the item in between, to drive
/// CredentialStore's racing-duplicate path.
final class RacingStore: ItemStore, @unchecked Sendable {
    let inner = InMemoryItemStore()
    var raced = false

    func items(matching filter: ItemFilter) throws(KeygateError) -> [ItemRecord] { try inner.items(matching: filter) }
    func open(_ item: ItemRecord) throws(KeygateError) -> SecretData { try inner.open(item) }
    func replace(_ replacements: [ItemReplacement], joining participant: (any TransactionParticipant)?)
        throws(KeygateError)
    {
        try inner.replace(replacements, joining: participant)
    }

    func delete(_ ids: [ItemID], joining participant: (any TransactionParticipant)?) throws(KeygateError) {
        try inner.delete(ids, joining: participant)
    }

    @discardableResult
    func insert(_ items: [NewItem], joining participant: (any TransactionParticipant)?) throws(KeygateError)
        -> [ItemRecord]
    {
        if !raced, let first = items.first {
            raced = true
            // Another process wins the race for the same key.
            try inner.insert([NewItem(fields: first.fields, data: SecretData("from the other process"))])
        }
        return try inner.insert(items, joining: participant)
    }
}

@Suite struct CredentialStoreRaceTests {
    @Test func saveUpdatesAfterARacingDuplicate() async throws {
        let store = RacingStore()
        let keychain = Keychain(store: store, accessGroups: ["app"], authenticator: ScriptedAuthenticator())
        let credentials = CredentialStore(keychain: keychain, service: "demo")
        try await credentials.save(SecretData("mine"), account: "user")
        #expect(store.raced)
        #expect(
            text(try await credentials.read(account: "user")) == "mine", "the racing add was updated with our value")
        #expect(try store.items(matching: ItemFilter(accessGroups: ["app"])).count == 1)
    }

    @Test func aMultiItemUpdateCancelledHalfwayChangesNothing() async throws {
        let fixture = try KeychainFixture(.sqlite)
        try await KeychainTests.add(fixture, service: "s1", account: "a", flags: .devicePasscode, value: "1")
        try await KeychainTests.add(fixture, service: "s2", account: "a", flags: .biometryAny, value: "2")
        // The first item's passcode is proved; the second item's fingerprint prompt is cancelled.
        fixture.authenticator.enqueue(.cancel, for: .biometry)
        let context = fixture.context()
        #expect(
            await KeychainTests.status {
                try await fixture.keychain.update(
                    ItemQuery(account: "a"), changes: ItemChanges(data: SecretData("x")), context: context)
            } == .userCanceled)
        var query = ItemQuery(account: "a", returnData: true)
        query.matchLimit = .all
        fixture.clock.advance(seconds: 5)
        #expect(try await fixture.keychain.copyMatching(query).compactMap { text($0.data) } == ["1", "2"])
    }
}
