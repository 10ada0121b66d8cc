import Foundation
import KeygatePolicy
import KeygateTesting
import Testing

@Suite struct EvaluatorTests {
    let evaluator = Evaluator()
    static let enrolled = EnrollmentSetHash(templateIDs: ["f1", "f2"])!

    func biometricContext(clock: ManualClock, reuse: Int = 0) -> AuthenticationContext {
        AuthenticationContext(
            state: AuthenticationState(
                biometry: BiometryState(isAvailable: true, enrollment: Self.enrolled), reuseSeconds: reuse),
            clock: clock)
    }

    @Test func aProofJustMadeCountsEvenWithoutReuse() throws {
        // spec §4.4: reuse 0 by default; the proof asked for by this request satisfies it.
        let clock = ManualClock()
        let context = biometricContext(clock: clock)
        let control = try AccessControl(protection: .whenUnlocked, flags: .devicePasscode)
        #expect(evaluator.evaluate(control, operation: .read, context: context).requirement == Requirement([.passcode]))
        context.recordProof(of: .passcode)
        clock.advance(seconds: 0.4)
        #expect(evaluator.evaluate(control, operation: .read, context: context).isAllowed)
        clock.advance(seconds: 0.7)
        let stale = evaluator.evaluate(control, operation: .read, context: context)
        #expect(stale.requirement == Requirement([.passcode]))
        #expect(stale.reasons.contains(.factorStale(.passcode, secondsAgo: 1, reuseSeconds: 0)))
    }

    @Test func reuseWindowIsCrossedWithTheClock() throws {
        let clock = ManualClock()
        let context = biometricContext(clock: clock, reuse: 10)
        let control = try AccessControl(protection: .whenUnlocked, flags: .biometryAny)
        context.recordProof(of: .biometry)
        clock.advance(seconds: 10.9)
        #expect(evaluator.evaluate(control, operation: .read, context: context).isAllowed)
        clock.advance(seconds: 0.2)
        #expect(evaluator.evaluate(control, operation: .read, context: context).requirement == Requirement([.biometry]))
        context.reuseSeconds = 5000
        #expect(context.reuseSeconds == 300)
    }

    @Test func fiveBiometryFailuresLockOutAndThePasscodeLiftsIt() throws {
        // spec §4.3: 5 failed matches lock biometry; userPresence then asks for the passcode.
        let clock = ManualClock()
        let context = biometricContext(clock: clock)
        for attempt in 1...5 { #expect(context.recordBiometryFailure() == (attempt == 5)) }
        #expect(context.state.biometry.isLockedOut)
        let any = try AccessControl(protection: .whenUnlocked, flags: .biometryAny)
        let presence = try AccessControl(protection: .whenUnlocked, flags: .userPresence)
        #expect(evaluator.evaluate(any, operation: .read, context: context).status == .authFailed)
        #expect(
            evaluator.evaluate(presence, operation: .read, context: context).requirement == Requirement([.passcode]))
        context.recordProof(of: .passcode)
        #expect(!context.state.biometry.isLockedOut)
        clock.advance(seconds: 5)
        #expect(
            evaluator.evaluate(presence, operation: .read, context: context).requirement
                == Requirement([.biometry, .passcode]))
    }

    @Test func invalidateForgetsProofsAndDenies() throws {
        let context = biometricContext(clock: ManualClock())
        let control = try AccessControl(protection: .whenUnlocked, flags: .userPresence)
        context.recordProof(of: .passcode)
        #expect(evaluator.evaluate(control, operation: .read, context: context).isAllowed)
        context.invalidate()
        context.invalidate()
        context.recordProof(of: .passcode)
        let decision = evaluator.evaluate(control, operation: .read, context: context)
        #expect(decision.status == .authFailed)
        #expect(decision.reasons.contains(.contextInvalidated))
        #expect(context.state.proofs.all.isEmpty)
    }

    @Test func addBindsTheCurrentEnrollmentAndReadUsesIt() throws {
        let clock = ManualClock()
        let context = biometricContext(clock: clock)
        let control = try AccessControl(protection: .whenUnlockedThisDeviceOnly, flags: .biometryCurrentSet)
        let add = evaluator.evaluate(control, operation: .add, context: context)
        #expect(add.isAllowed)
        let binding = try #require(add.bindingEnrollment)
        #expect(binding == Self.enrolled)
        let stored = control.bound(to: binding)
        context.recordProof(of: .biometry)
        #expect(evaluator.evaluate(stored, operation: .read, context: context).isAllowed)
        // A finger is added: the item is gone (spec §3), or kept with errSecAuthFailed if so configured.
        context.update { $0.biometry.enrollment = EnrollmentSetHash(templateIDs: ["f1", "f2", "f3"]) }
        let gone = evaluator.evaluate(stored, operation: .read, context: context)
        #expect(gone.status == .itemNotFound)
        #expect(gone.invalidatesItem)
        #expect(gone.denial == .invalidated(.enrollmentChanged), "the evaluator says so itself (issue 13 point 1)")
        let kept = Evaluator(options: .init(enrollmentChangeStatus: .authFailed))
            .evaluate(stored, operation: .read, context: context)
        #expect(kept.status == .authFailed)
        #expect(!kept.invalidatesItem)
        #expect(kept.denial == nil)
    }

    @Test func requirementLooksLikeApplesPolicies() {
        let either = Requirement([.biometry, .passcode])
        #expect(either.description == "biometry | passcode")
        #expect(either.isSatisfied(by: .passcode))
        #expect(!either.isSatisfied(by: .companion))
        let both = Requirement([FactorSet([.biometry, .passcode])])
        #expect(both.description == "biometry + passcode")
        #expect(!both.isSatisfied(by: .biometry))
        #expect(Requirement([.passcode, .passcode]).count == 1)
        #expect(Requirement().description == "nothing possible")
    }

    /// Every flag combination × class × operation × a grid of device states: the evaluator
    /// never traps, keeps every reason (fewer than its capacity), and a decision round-trips as JSON.
    @Test func neverTrapsAndNeverTruncatesReasons() throws {
        let enrolled = Self.enrolled
        let other = EnrollmentSetHash(templateIDs: ["f9"])!
        var states: [AuthenticationState] = []
        for locked in [false, true] {
            for passcode in [false, true] {
                for biometry in [
                    BiometryState(), BiometryState(isAvailable: true, enrollment: enrolled),
                    BiometryState(isAvailable: true, enrollment: other, isLockedOut: true),
                ] {
                    for interaction in InteractionPolicy.allCases {
                        var proofs = Proofs()
                        if passcode { proofs.record(Proof(factor: .passcode, time: Timestamp(seconds: 99))) }
                        proofs.record(Proof(factor: .biometry, time: Timestamp(seconds: 100), enrollment: enrolled))
                        proofs.record(Proof(factor: .applicationPassword, time: Timestamp(seconds: 100)))
                        states.append(
                            AuthenticationState(
                                device: DeviceState(
                                    isLocked: locked, hasBeenUnlockedSinceBoot: !locked, isPasscodeSet: passcode),
                                biometry: biometry, isCompanionAvailable: locked, proofs: proofs, reuseSeconds: 1,
                                interaction: interaction))
                    }
                }
            }
        }
        var evaluated = 0
        for flags in AccessControlPropertyTests.combinations {
            for protection in ProtectionClass.allCases {
                guard var control = try? AccessControl(protection: protection, flags: flags) else { continue }
                if control.needsBinding { control = control.bound(to: enrolled) }
                for operation in Operation.allCases {
                    for state in states {
                        let decision = evaluator.evaluate(
                            control, operation: operation, state: state, now: Timestamp(seconds: 100))
                        #expect(decision.reasons.count < DecisionReasons.capacity)
                        #expect(!decision.reasons.isEmpty)
                        if case .authenticate(let requirement) = decision.outcome { #expect(requirement.count > 0) }
                        evaluated += 1
                    }
                }
            }
        }
        #expect(evaluated > 100_000)
    }

    @Test func decisionsRoundTripAsJSON() throws {
        let context = biometricContext(clock: ManualClock(), reuse: 3)
        context.recordProof(of: .passcode)
        let controls = [
            try AccessControl(protection: .whenUnlocked, flags: [.userPresence, .applicationPassword]),
            try AccessControl(protection: .whenUnlocked, flags: [.biometryAny, .devicePasscode]),
            try AccessControl(protection: .whenPasscodeSetThisDeviceOnly, flags: .biometryCurrentSet),
        ]
        for control in controls {
            for operation in Operation.allCases {
                let decision = evaluator.evaluate(control, operation: operation, context: context)
                let data = try JSONEncoder().encode(decision)
                #expect(try JSONDecoder().decode(Decision.self, from: data) == decision)
                #expect(!String(decoding: data, as: UTF8.self).isEmpty)
            }
        }
    }
}
