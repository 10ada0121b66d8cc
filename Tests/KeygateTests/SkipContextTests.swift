import Keygate
import KeygatePolicy
import KeygateStore
import KeygateTesting
import Testing

/// A context whose interaction policy is `skip` is valid only for reads (spec §5: the
/// `kSecUseAuthenticationUISkip` of `SecItemCopyMatching`): every other call refuses it with
/// `errSecParam` before anything changes or is written, as the same policy on the query is
/// refused, so no item is silently left out of a change or a backup.
@Suite struct SkipContextTests {
    /// A fixture holding a plain item and one that needs a proof, and a context that skips.
    func seeded(_ backend: Backend) async throws -> (KeychainFixture, AuthenticationContext) {
        let fixture = try KeychainFixture(backend)
        try await KeychainTests.add(fixture, account: "plain", value: "p")
        try await KeychainTests.add(fixture, account: "guarded", flags: .userPresence, value: "g")
        let context = fixture.context()
        context.interaction = .skip
        return (fixture, context)
    }

    @Test(arguments: Backend.allCases)
    func changesRefuseASkippingContext(_ backend: Backend) async throws {
        let (fixture, context) = try await seeded(backend)
        #expect(
            await KeychainTests.status {
                try await fixture.keychain.add(
                    AddRequest(service: "api", account: "new", data: SecretData("n")), context: context)
            } == .param)
        var changes = ItemChanges()
        changes.label = "changed"
        #expect(
            await KeychainTests.status {
                try await fixture.keychain.update(ItemQuery(service: "api"), changes: changes, context: context)
            } == .param)
        #expect(
            await KeychainTests.status {
                try await fixture.keychain.delete(ItemQuery(service: "api"), context: context)
            } == .param)
        #expect(try fixture.rows() == 2)
        let labels = try await fixture.keychain.copyMatching(
            ItemQuery(service: "api", matchLimit: .all, returnAttributes: true), context: fixture.context())
        #expect(labels.allSatisfy { $0.attributes?.label != "changed" })
        #expect(fixture.authenticator.prompts.isEmpty)
    }

    @Test(arguments: Backend.allCases)
    func anExportRefusesASkippingContextRatherThanLeaveItemsOut(_ backend: Backend) async throws {
        let (fixture, context) = try await seeded(backend)
        #expect(
            await KeychainTests.status {
                _ = try await fixture.keychain.exportBackup(
                    passphrase: SecretData("backup words"), strength: .minimumForTests, context: context)
            } == .param)
        #expect(fixture.authenticator.prompts.isEmpty)
    }
}
