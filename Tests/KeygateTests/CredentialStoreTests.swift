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
