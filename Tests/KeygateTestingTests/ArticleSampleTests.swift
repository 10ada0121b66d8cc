// The tests of the DocC article "Testing access-control logic"
// (Sources/Keygate/Keygate.docc/TestingAccessControlLogic.md), run as they are printed:
// `make docs` fails when a test sample of an article is not found here word for word.
import Keygate
import KeygatePolicy
import KeygateTesting
import Testing

@Test func aDevicePasscodeItemNeedsAFreshPasscodeProofAndAnUnlockedDevice() throws {
    let control = try AccessControl(protection: .whenUnlockedThisDeviceOnly, flags: .devicePasscode)
    let now = Timestamp(seconds: 1_800_000_000)
    var state = AuthenticationState(reuseSeconds: 10)

    let first = Evaluator().evaluate(control, operation: .read, state: state, now: now)
    #expect(first.requirement?.description == "passcode")

    state.proofs.record(Proof(factor: .passcode, time: now.adding(seconds: -5)))
    #expect(Evaluator().evaluate(control, operation: .read, state: state, now: now).isAllowed)

    state.device.isLocked = true
    let locked = Evaluator().evaluate(control, operation: .read, state: state, now: now)
    #expect(locked.status == .interactionNotAllowed)
    #expect(locked.reasons.map(\.code).contains("classUnavailable"))
}

@Test func aLockedDeviceRefusesTheRead() async throws {
    let device = SimulatedDevice(enrolled: ["right-index"])
    let audit = AuditRecorder(), auth = ScriptedAuthenticator()
    let keychain = Keychain(
        store: InMemoryItemStore(), accessGroups: ["app"], authenticator: auth, device: device,
        auditor: Auditor(sink: audit))
    let vault = CredentialStore(keychain: keychain, service: "api")
    try await vault.save(SecretData("token"), account: "me")

    device.lock()
    await #expect(throws: KeygateError.self) { try await vault.read(account: "me") }
    audit.expectLastDecision(
        .read, service: "api", account: "me", is: .deny, status: .interactionNotAllowed,
        because: .classUnavailable)
    auth.expectPrompts(.passcode, count: 0)
}

@Test func aCancelledPromptIsNotNoToken() async throws {
    let auth = ScriptedAuthenticator()
    let keychain = Keychain(
        store: InMemoryItemStore(), accessGroups: ["app"], authenticator: auth,
        device: SimulatedDevice(enrolled: ["right-index"]))
    let presence = try AccessControl(protection: .whenUnlockedThisDeviceOnly, flags: .userPresence)
    let vault = CredentialStore(keychain: keychain, service: "api", accessControl: presence)
    try await vault.save(SecretData("token"), account: "me")

    auth.enqueue(.cancel, for: .biometry)
    await #expect(throws: KeygateError(.userCanceled, "")) { try await vault.read(account: "me") }
    #expect(try await vault.read(account: "me") == SecretData("token"), "nothing was erased")
}

@Test func aProofIsReusedOnlyWithinTheWindow() async throws {
    let auth = ScriptedAuthenticator(), clock = ManualClock()
    let keychain = Keychain(
        store: InMemoryItemStore(), accessGroups: ["app"], authenticator: auth,
        device: SimulatedDevice(enrolled: []), clock: clock)
    let passcode = try AccessControl(protection: .whenUnlockedThisDeviceOnly, flags: .devicePasscode)
    let vault = CredentialStore(keychain: keychain, service: "api", accessControl: passcode)
    try await vault.save(SecretData("token"), account: "me")

    let context = AuthenticationContext()
    context.reuseSeconds = 10
    _ = try await vault.read(account: "me", context: context)
    clock.advance(seconds: 10)
    _ = try await vault.read(account: "me", context: context)
    auth.expectPrompts(.passcode, count: 1)

    clock.advance(seconds: 1)
    _ = try await vault.read(account: "me", context: context)
    auth.expectPrompts(.passcode, count: 2)
}

@Test func anEnrollmentChangeRemovesACurrentSetItem() async throws {
    let device = SimulatedDevice(enrolled: ["right-index"]), audit = AuditRecorder()
    let keychain = Keychain(
        store: InMemoryItemStore(), accessGroups: ["app"], authenticator: ScriptedAuthenticator(),
        device: device, auditor: Auditor(sink: audit))
    let payment = try AccessControl(protection: .whenPasscodeSetThisDeviceOnly, flags: .biometryCurrentSet)
    let vault = CredentialStore(keychain: keychain, service: "pay", accessControl: payment)
    try await vault.save(SecretData("card-token"), account: "me")
    let mark = audit.lastSequence

    device.enroll("left-thumb")
    #expect(try await vault.read(account: "me") == nil)
    audit.expectNoAllowedRead(service: "pay", account: "me", after: mark)
}

@Test(arguments: try DecisionCorpus.load())
func theLibraryDecidesEveryCaseAsTheCorpusSays(_ decisionCase: DecisionCase) throws {
    let problems = decisionCase.mismatches(try ObservedOutcome.library(decisionCase))
    #expect(problems.isEmpty, "\(decisionCase): \(problems.joined(separator: "; "))")
}
