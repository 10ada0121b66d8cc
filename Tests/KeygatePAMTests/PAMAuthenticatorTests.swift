import Foundation
import KeygatePAM
import KeygatePolicy
import KeygateTesting
import Testing

/// Real PAM transactions through pam_wrapper + pam_matrix (see PAMFixture).
@Suite struct PAMAuthenticatorTests {
    static let enrolled = EnrollmentSetHash(templateIDs: ["right-index"])!

    func context(clock: ManualClock = ManualClock(), reuse: Int = 0) -> AuthenticationContext {
        AuthenticationContext(
            state: AuthenticationState(
                biometry: BiometryState(isAvailable: true, enrollment: Self.enrolled), reuseSeconds: reuse),
            clock: clock)
    }

    @Test func pamWrapperIsLoadedAndActive() throws {
        let world = try PAMFixture.load()
        #expect(world.library.isWrapperActive)
        #expect(world.user == (try ProcessOwner.userName()))
    }

    @Test func rightPasswordIsProvedAndRecorded() async throws {
        let source = ProgrammaticPassphraseSource(passphrase: PAMFixture.passcode)
        let authenticator = try PAMFixture.authenticator(source: source)
        let context = context()
        let outcome = await authenticator.prove(.passcode, prompt: "Read the token", context: context)
        #expect(outcome == .proved(.passcode))
        #expect(context.state.proofs[.passcode] != nil)
        #expect(source.prompts.map(\.text) == ["Password: "])
        #expect(source.prompts.first?.reason == "Read the token")
        #expect(source.prompts.first?.service == "kg-passcode")
        #expect(source.prompts.first?.echo == false)
    }

    @Test func wrongPasswordFailsAndRecordsNoProof() async throws {
        let authenticator = try PAMFixture.authenticator(source: ProgrammaticPassphraseSource(passphrase: "wrong"))
        let context = context()
        let outcome = await authenticator.prove(.passcode, prompt: "Read", context: context)
        #expect(outcome == .failed(.passcode, message: "authentication failed", cause: .pam(7)))
        #expect(outcome.status == .authFailed)
        #expect(context.state.proofs[.passcode] == nil)
        #expect(context.state.attempts.passcode.failures == 1)
    }

    @Test func cancelIsDetectedFromTheConversation() async throws {
        // pam_matrix turns the cancelled prompt into PAM_AUTHINFO_UNAVAIL; Keygate still says cancelled.
        let source = ProgrammaticPassphraseSource(passphrase: nil)
        let authenticator = try PAMFixture.authenticator(source: source)
        let context = context()
        let outcome = await authenticator.prove(.passcode, prompt: "Read", context: context)
        #expect(outcome == .cancelled)
        #expect(outcome.status == .userCanceled)
        #expect(context.state.proofs[.passcode] == nil)
        #expect(context.state.attempts.passcode.failures == 0)
    }

    @Test func infoAndErrorMessagesReachTheUser() async throws {
        let source = ProgrammaticPassphraseSource(passphrase: PAMFixture.passcode)
        let authenticator = try PAMFixture.authenticator(source: source, passcodeService: "kg-chatty")
        let outcome = await authenticator.prove(.passcode, prompt: "Read", context: context())
        #expect(outcome == .proved(.passcode))
        #expect(source.messages.contains { $0.kind == .info })
        #expect(source.messages.contains { $0.kind == .error })
        #expect(source.messages.allSatisfy { $0.service == "kg-chatty" })
    }

    @Test func missingServiceIsUnavailableNamingIt() async throws {
        let source = ProgrammaticPassphraseSource(passphrase: PAMFixture.passcode)
        let authenticator = try PAMFixture.authenticator(source: source, passcodeService: "kg-no-such-service")
        let outcome = await authenticator.prove(.passcode, prompt: "Read", context: context())
        guard case .unavailable(let reason, let cause) = outcome else {
            Issue.record("expected unavailable, got \(outcome)")
            return
        }
        #expect(reason.contains("'kg-no-such-service'"))
        #expect(cause == nil, "no PAM call was made")
        #expect(source.prompts.isEmpty)
        #expect(outcome.status == .notAvailable)
    }

    @Test func moduleWithoutDataIsUnavailableNamingTheService() async throws {
        let authenticator = try PAMFixture.authenticator(
            source: ProgrammaticPassphraseSource(passphrase: PAMFixture.passcode), passcodeService: "kg-unavailable")
        let outcome = await authenticator.prove(.passcode, prompt: "Read", context: context())
        guard case .unavailable(let reason, let cause) = outcome else {
            Issue.record("expected unavailable, got \(outcome)")
            return
        }
        #expect(reason.contains("'kg-unavailable'") && reason.contains("PAM_AUTHINFO_UNAVAIL"))
        #expect(cause == .pam(9), "PAM_AUTHINFO_UNAVAIL is the cause")
    }

    @Test func accountRefusalFailsWithTheModulesMessage() async throws {
        let authenticator = try PAMFixture.authenticator(
            source: ProgrammaticPassphraseSource(passphrase: PAMFixture.passcode), passcodeService: "kg-denied")
        let outcome = await authenticator.prove(.passcode, prompt: "Read", context: context())
        guard case .failed(.passcode, let message, let cause) = outcome else {
            Issue.record("expected failed, got \(outcome)")
            return
        }
        #expect(message == "Permission denied")
        #expect(cause == .pam(6), "PAM_PERM_DENIED is the cause")
    }

    @Test func failuresLockOutAndTheRightPasswordIsThenRefused() async throws {
        let policy = AttemptPolicy(maxFailures: 3, windowSeconds: 60, lockoutSeconds: 30)
        let clock = ManualClock()
        let context = context(clock: clock)
        let wrong = ProgrammaticPassphraseSource(passphrase: "wrong")
        let authenticator = try PAMFixture.authenticator(source: wrong, policy: policy)
        #expect(
            await authenticator.prove(.passcode, prompt: "Read", context: context)
                == .failed(.passcode, message: "authentication failed", cause: .pam(7)))
        #expect(
            await authenticator.prove(.passcode, prompt: "Read", context: context)
                == .failed(.passcode, message: "authentication failed", cause: .pam(7)))
        let third = await authenticator.prove(.passcode, prompt: "Read", context: context)
        #expect(third == .lockedOut(.passcode, until: clock.now().adding(seconds: 30)))

        let right = ProgrammaticPassphraseSource(passphrase: PAMFixture.passcode)
        let rightAuthenticator = try PAMFixture.authenticator(source: right, policy: policy)
        let refused = await rightAuthenticator.prove(.passcode, prompt: "Read", context: context)
        guard case .lockedOut(.passcode, _) = refused else {
            Issue.record("expected a lockout, got \(refused)")
            return
        }
        #expect(right.prompts.isEmpty, "PAM must not even be asked during a lockout")
        #expect(context.state.proofs[.passcode] == nil)
        // The evaluator sees the lockout too: the passcode cannot be prompted for.
        let control = try AccessControl(protection: .whenUnlocked, flags: .devicePasscode)
        #expect(Evaluator().evaluate(control, operation: .read, context: context).status == .authFailed)

        clock.advance(seconds: 31)
        #expect(await rightAuthenticator.prove(.passcode, prompt: "Read", context: context) == .proved(.passcode))
    }

    @Test func passcodeDoesNotSatisfyBiometryButTheBiometryServiceDoes() async throws {
        let evaluator = Evaluator()
        let control = try AccessControl(protection: .whenUnlocked, flags: .biometryAny)
        let context = context()
        let passcode = try PAMFixture.authenticator(
            source: ProgrammaticPassphraseSource(passphrase: PAMFixture.passcode))
        #expect(await passcode.prove(.passcode, prompt: "Read", context: context) == .proved(.passcode))
        let decision = evaluator.evaluate(control, operation: .read, context: context)
        #expect(decision.requirement == Requirement([.biometry]))

        // The biometry service (a pam_matrix stand-in for pam_fprintd) proves the biometry factor.
        let finger = ProgrammaticPassphraseSource(passphrase: PAMFixture.finger)
        let biometry = try PAMFixture.authenticator(source: finger)
        let outcome = await biometry.authenticate(decision.requirement!, prompt: "Read", context: context)
        #expect(outcome == .proved(.biometry))
        #expect(finger.prompts.map(\.service) == ["kg-biometry"])
        #expect(context.state.proofs[.biometry]?.enrollment == Self.enrolled)
        #expect(evaluator.evaluate(control, operation: .read, context: context).isAllowed)
    }

    @Test func userPresenceFallsBackToThePasscode() async throws {
        // Biometry fails (wrong "finger"), then the passcode is asked and proved.
        let source = ProgrammaticPassphraseSource(answers: ["not-my-finger", PAMFixture.passcode])
        let authenticator = try PAMFixture.authenticator(source: source)
        let context = context()
        let control = try AccessControl(protection: .whenUnlocked, flags: .userPresence)
        let requirement = try #require(Evaluator().evaluate(control, operation: .read, context: context).requirement)
        #expect(requirement == Requirement([.biometry, .passcode]))
        let outcome = await authenticator.authenticate(requirement, prompt: "Read", context: context)
        #expect(outcome == .proved(.passcode))
        #expect(source.prompts.map(\.factor) == [.biometry, .passcode])
        #expect(Evaluator().evaluate(control, operation: .read, context: context).isAllowed)

        // With the biometry service missing, the passcode is asked straight away.
        let direct = ProgrammaticPassphraseSource(passphrase: PAMFixture.passcode)
        let noBiometry = try PAMFixture.authenticator(source: direct, biometryService: "kg-no-fprintd")
        #expect(
            await noBiometry.authenticate(requirement, prompt: "Read", context: self.context()) == .proved(.passcode))
        #expect(direct.prompts.map(\.factor) == [.passcode])
    }

    @Test func aCancelStopsTheFallback() async throws {
        let source = ProgrammaticPassphraseSource(answers: [nil, PAMFixture.passcode])
        let authenticator = try PAMFixture.authenticator(source: source)
        let outcome = await authenticator.authenticate(
            Requirement([.biometry, .passcode]), prompt: "Read", context: context())
        #expect(outcome == .cancelled)
        #expect(source.prompts.count == 1)
    }

    @Test func aProofOlderThanTheReuseWindowIsAskedAgain() async throws {
        let clock = ManualClock()
        let context = context(clock: clock, reuse: 10)
        let source = ProgrammaticPassphraseSource(passphrase: PAMFixture.passcode)
        let authenticator = try PAMFixture.authenticator(source: source)
        let control = try AccessControl(protection: .whenUnlocked, flags: .devicePasscode)
        let evaluator = Evaluator()
        #expect(await authenticator.prove(.passcode, prompt: "Read", context: context) == .proved(.passcode))
        clock.advance(seconds: 10)
        #expect(evaluator.evaluate(control, operation: .read, context: context).isAllowed)
        clock.advance(seconds: 1.5)
        let again = evaluator.evaluate(control, operation: .read, context: context)
        #expect(again.requirement == Requirement([.passcode]))
        #expect(
            await authenticator.authenticate(again.requirement!, prompt: "Read", context: context) == .proved(.passcode)
        )
        #expect(source.prompts.count == 2)
    }

    @Test func eightConcurrentProofsOnSeparateHandles() async throws {
        _ = try PAMFixture.load()
        let results = await withTaskGroup(of: (Bool, AuthenticationOutcome).self) { group in
            for index in 0..<8 {
                let right = index % 2 == 0
                group.addTask {
                    let source = ProgrammaticPassphraseSource(passphrase: right ? PAMFixture.passcode : "nope-\(index)")
                    let authenticator = try! PAMFixture.authenticator(source: source)
                    return (right, await authenticator.prove(.passcode, prompt: "Read", context: self.context()))
                }
            }
            var all: [(Bool, AuthenticationOutcome)] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(results.count == 8)
        for (right, outcome) in results {
            #expect(
                outcome
                    == (right
                        ? .proved(.passcode) : .failed(.passcode, message: "authentication failed", cause: .pam(7))))
        }
    }
}
