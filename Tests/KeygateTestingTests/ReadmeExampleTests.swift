import Keygate
import KeygateTesting
import Testing

/// The README's test example, run as printed there (`ReadmeSnippetTests` finds it here word for word).
@Test func lockedReadsAreRefusedNotMissing() async throws {
    let device = SimulatedDevice(), audit = AuditRecorder(), auth = ScriptedAuthenticator()
    let keychain = Keychain(
        store: InMemoryItemStore(), accessGroups: ["app"], authenticator: auth, device: device,
        auditor: Auditor(sink: audit))
    let vault = CredentialStore(keychain: keychain, service: "api")
    try await vault.save(SecretData("token"), account: "me")
    device.lock()
    await #expect(throws: KeygateError.self) { try await vault.read(account: "me") }
    audit.expectLastDecision(
        .read, service: "api", account: "me", is: .deny, status: .interactionNotAllowed, because: .classUnavailable)
    auth.expectPrompts(.passcode, count: 0)
}
