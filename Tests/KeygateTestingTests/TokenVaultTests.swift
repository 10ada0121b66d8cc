import Foundation
import Keygate
import KeygatePolicy
import KeygateStore
import KeygateTesting
import Testing

/// The example suite: TokenVault's behaviour, asserted through the audit trail.
@Suite struct TokenVaultTests {
    let device = SimulatedDevice(enrolled: ["right-index"])
    let authenticator = ScriptedAuthenticator()
    let audit = AuditRecorder()
    let clock = ManualClock()
    let vault: TokenVault

    init() {
        vault = TokenVault(
            keychain: Keychain(
                store: InMemoryItemStore(), accessGroups: ["com.example"], authenticator: authenticator, device: device,
                clock: clock, auditor: Auditor(sink: audit)))
    }

    @Test func aLockedDeviceRefusesAndUnlockingRestores() async throws {
        try await vault.storeRefreshToken("r-1")
        device.lock()
        await #expect(throws: KeygateError.self) { try await vault.refreshToken() }
        audit.expectLastDecision(
            .read, service: TokenVault.service, account: "refresh", is: .deny, status: .interactionNotAllowed,
            because: .classUnavailable)
        authenticator.expectPrompts(.biometry, count: 0)
        device.unlock()
        #expect(try await vault.refreshToken() == "r-1")
        authenticator.expectPrompts(.biometry, count: 1)
        audit.expectLastDecision(.read, service: TokenVault.service, account: "refresh", is: .allow)
    }

    @Test func anEnrollmentChangeRemovesThePaymentTokenButNotTheRefreshToken() async throws {
        try await vault.storeRefreshToken("r-1")
        try await vault.storePaymentToken("p-1")
        #expect(try await vault.paymentToken() == "p-1")
        let mark = audit.lastSequence
        device.enroll("left-thumb")
        #expect(try await vault.paymentToken() == nil, "the payment token is gone")
        #expect(try await vault.refreshToken() == "r-1", "userPresence survives enrollment changes")
        audit.expectNoAllowedRead(service: TokenVault.service, account: "payment", after: mark)
    }

    @Test func thePaymentTokenHasNoReuseWindow() async throws {
        try await vault.storePaymentToken("p-1")
        let context = AuthenticationContext(clock: clock)
        #expect(try await vault.paymentToken(context: context) == "p-1")
        clock.advance(seconds: 2)
        #expect(try await vault.paymentToken(context: context) == "p-1")
        authenticator.expectPrompts(.biometry, count: 2)
    }

    @Test func aCancelledPromptIsNotNoToken() async throws {
        try await vault.storeRefreshToken("r-1")
        authenticator.enqueue(.cancel, for: .biometry)
        do {
            _ = try await vault.refreshToken()
            Issue.record("a cancel must not read as 'no token'")
        } catch let error as KeygateError {
            #expect(error.status == .userCanceled)
        }
        #expect(try await vault.refreshToken() == "r-1", "nothing was erased")
    }

    @Test func logoutClearsEveryItem() async throws {
        try await vault.storeRefreshToken("r-1")
        try await vault.storePaymentToken("p-1")
        device.lock()
        try await vault.logout()
        device.unlock()
        #expect(try await vault.refreshToken() == nil)
        #expect(try await vault.paymentToken() == nil)
        try await vault.logout()
        audit.expectLastDecision(.delete, service: TokenVault.service, account: "payment", is: .allow)
    }

    @Test func theTrailMatchesItsGoldenFile() async throws {
        try await vault.storeRefreshToken("r-1")
        device.lock()
        _ = try? await vault.refreshToken()
        device.unlock()
        _ = try await vault.refreshToken()
        let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Golden/token-vault.jsonl")
        audit.expectGolden(golden.path)
        #expect(!audit.normalizedTrail.contains("r-1"), "the secret never reaches the trail")
    }
}
