import Keygate
import KeygatePolicy
import KeygateStore
import KeygateTesting
import Testing

/// Issue 9, point 13, through the facade: `copyMatching` with `skip` leaves out an item whose
/// factor cannot be used, exactly like an item that would prompt (spec §5, §6.1).
@Suite struct SkipWithUnusableFactorTests {
    @Test(arguments: Backend.allCases)
    func biometryItemWithoutSensorIsLeftOutUnderSkip(_ backend: Backend) async throws {
        let fixture = try KeychainFixture(backend)
        fixture.device.enroll("f1")
        let biometry = try AccessControl(protection: .whenUnlocked, flags: .biometryAny)
        try await fixture.keychain.add(
            AddRequest(service: "api", account: "finger", accessControl: biometry, data: SecretData("b")))
        try await fixture.keychain.add(AddRequest(service: "api", account: "plain", data: SecretData("p")))
        fixture.device.setBiometryAvailable(false)

        var all = ItemQuery(service: "api", returnData: true)
        all.matchLimit = .all
        all.authenticationUI = .skip
        let items = try await fixture.keychain.copyMatching(all)
        #expect(items.compactMap { text($0.data) } == ["p"])

        var one = ItemQuery(service: "api", account: "finger", returnData: true)
        one.authenticationUI = .skip
        do {
            _ = try await fixture.keychain.copyMatching(one)
            Issue.record("expected errSecItemNotFound")
        } catch {
            #expect(error.status == .itemNotFound)
        }
        // Without skip it is still errSecAuthFailed, and the item was never removed.
        one.authenticationUI = nil
        do {
            _ = try await fixture.keychain.copyMatching(one)
            Issue.record("expected errSecAuthFailed")
        } catch {
            #expect(error.status == .authFailed)
        }
        #expect(try fixture.rows() == 2)
        #expect(fixture.authenticator.prompts.isEmpty)
    }
}
