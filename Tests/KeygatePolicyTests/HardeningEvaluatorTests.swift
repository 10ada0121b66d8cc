import KeygatePolicy
import Testing

/// Issue 9 ("Hardening"), the evaluator's part: Apple-fidelity edges the spec leaves open,
/// decided as the issue asks.
@Suite struct HardeningEvaluatorTests {
    let evaluator = Evaluator()
    static let now = Timestamp(seconds: 100)

    // MARK: - Point 14: a locked device with no passcode

    /// spec §2 / §6.1 rows 1 and 3: without a passcode the class keys are not protected by
    /// one, so `ak`, `aku`, `ck` and `cku` stay available while "locked" (before, all four
    /// were `errSecInteractionNotAllowed` locked, and `ck`/`cku` before the first unlock).
    @Test(arguments: [
        ProtectionClass.whenUnlocked, .whenUnlockedThisDeviceOnly, .afterFirstUnlock, .afterFirstUnlockThisDeviceOnly,
    ])
    func lockedWithoutPasscodeKeepsClassesAvailable(_ protection: ProtectionClass) throws {
        let control = try AccessControl(protection: protection, flags: [])
        for unlockedSinceBoot in [true, false] {
            let state = AuthenticationState(
                device: DeviceState(isLocked: true, hasBeenUnlockedSinceBoot: unlockedSinceBoot, isPasscodeSet: false))
            for operation in [Operation.read, .update, .add] {
                let decision = evaluator.evaluate(control, operation: operation, state: state, now: Self.now)
                #expect(decision.isAllowed, "\(protection) \(operation): \(decision.explanation)")
                #expect(decision.reasons.contains(.classAvailable(protection)))
            }
        }
    }

    /// The same items with a passcode set are still refused while locked (spec §6.1 row 1).
    @Test(arguments: [ProtectionClass.whenUnlocked, .whenUnlockedThisDeviceOnly])
    func lockedWithPasscodeStillRefuses(_ protection: ProtectionClass) throws {
        let control = try AccessControl(protection: protection, flags: [])
        let state = AuthenticationState(device: DeviceState(isLocked: true, isPasscodeSet: true))
        let decision = evaluator.evaluate(control, operation: .read, state: state, now: Self.now)
        #expect(decision.status == .interactionNotAllowed)
        #expect(decision.reasons.contains(.classUnavailable(protection, .deviceLocked)))
        let beforeFirstUnlock = AuthenticationState(
            device: DeviceState(isLocked: true, hasBeenUnlockedSinceBoot: false, isPasscodeSet: true))
        let ck = try AccessControl(protection: .afterFirstUnlock, flags: [])
        #expect(
            evaluator.evaluate(ck, operation: .read, state: beforeFirstUnlock, now: Self.now).status
                == .interactionNotAllowed)
    }

    /// `akpu` follows its own rule: without a passcode its items are gone (read) or cannot
    /// be added, locked or not (spec §2).
    @Test func whenPasscodeSetFollowsItsOwnRule() throws {
        let control = try AccessControl(protection: .whenPasscodeSetThisDeviceOnly, flags: [])
        let state = AuthenticationState(device: DeviceState(isLocked: true, isPasscodeSet: false))
        let read = evaluator.evaluate(control, operation: .read, state: state, now: Self.now)
        #expect(read.status == .itemNotFound)
        #expect(read.reasons.contains(.passcodeRemoved))
        #expect(read.denial == .invalidated(.passcodeRemoved))
        #expect(evaluator.evaluate(control, operation: .add, state: state, now: Self.now).status == .notAvailable)
        let withPasscode = AuthenticationState(device: DeviceState(isLocked: true, isPasscodeSet: true))
        let locked = evaluator.evaluate(control, operation: .read, state: withPasscode, now: Self.now)
        #expect(locked.status == .interactionNotAllowed)
        #expect(locked.denial == nil, "a locked device refuses; the item stays")
    }

    // MARK: - Point 13: skip with a factor that cannot be used

    /// spec §5 / §6.1: under `skip` Apple drops every row that needs authentication before
    /// LocalAuthentication runs, so a biometry-only item with no usable sensor is left out
    /// (`errSecItemNotFound`), like any skipped row. Before, it was `errSecAuthFailed`.
    @Test func skipLeavesOutItemsWhoseFactorCannotBeUsed() throws {
        let enrolled = EnrollmentSetHash(templateIDs: ["f1"])!
        let biometryStates = [
            BiometryState(), BiometryState(isAvailable: true),
            BiometryState(isAvailable: true, enrollment: enrolled, isLockedOut: true),
        ]
        let controls = [
            try AccessControl(protection: .whenUnlocked, flags: .biometryAny),
            try AccessControl(protection: .whenUnlocked, flags: .biometryCurrentSet).bound(to: enrolled),
            try AccessControl(protection: .whenUnlocked, flags: [.biometryAny, .companion]),
        ]
        for biometry in biometryStates {
            // With a sensor and nothing enrolled, a bound current-set item is invalidated (§3): not a skip.
            for control in controls
            where !(control.boundEnrollment != nil && biometry.isAvailable && biometry.enrollment == nil) {
                var state = AuthenticationState(biometry: biometry, interaction: .allow)
                let refused = evaluator.evaluate(control, operation: .read, state: state, now: Self.now)
                #expect(refused.status == .authFailed, "without skip: \(refused.explanation)")
                state.interaction = .skip
                let skipped = evaluator.evaluate(control, operation: .read, state: state, now: Self.now)
                #expect(skipped.status == .itemNotFound, "\(control.textForm): \(skipped.explanation)")
                #expect(skipped.reasons.contains(.interactionNotAllowed(.skip)))
                #expect(!skipped.invalidatesItem, "a skipped item is left out, never removed")
                #expect(skipped.denial == .skipped)
            }
        }
        // No passcode set, and an invalidated context: also left out.
        var state = AuthenticationState(device: DeviceState(isPasscodeSet: false), interaction: .skip)
        let passcode = try AccessControl(protection: .whenUnlocked, flags: .devicePasscode)
        #expect(evaluator.evaluate(passcode, operation: .read, state: state, now: Self.now).status == .itemNotFound)
        state = AuthenticationState(interaction: .skip, isInvalidated: true)
        #expect(evaluator.evaluate(passcode, operation: .read, state: state, now: Self.now).status == .itemNotFound)
    }

    /// Skip changes only items that need authentication: a satisfied item is allowed, a
    /// locked class key is still `errSecInteractionNotAllowed`, and skip outside a read is
    /// still `errSecParam`.
    @Test func skipKeepsItsOtherRules() throws {
        let control = try AccessControl(protection: .whenUnlocked, flags: .biometryAny)
        var proofs = Proofs()
        proofs.record(Proof(factor: .biometry, time: Self.now))
        let enrolled = BiometryState(isAvailable: true, enrollment: EnrollmentSetHash(templateIDs: ["f1"]))
        let proved = AuthenticationState(biometry: enrolled, proofs: proofs, interaction: .skip)
        #expect(evaluator.evaluate(control, operation: .read, state: proved, now: Self.now).isAllowed)
        let locked = AuthenticationState(device: DeviceState(isLocked: true), interaction: .skip)
        #expect(
            evaluator.evaluate(control, operation: .read, state: locked, now: Self.now).status
                == .interactionNotAllowed)
        let unlocked = AuthenticationState(interaction: .skip)
        #expect(evaluator.evaluate(control, operation: .update, state: unlocked, now: Self.now).status == .param)
    }
}
