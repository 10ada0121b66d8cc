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
        #expect(evaluator.evaluate(control, operation: .add, state: state, now: Self.now).status == .notAvailable)
        let withPasscode = AuthenticationState(device: DeviceState(isLocked: true, isPasscodeSet: true))
        #expect(
            evaluator.evaluate(control, operation: .read, state: withPasscode, now: Self.now).status
                == .interactionNotAllowed)
    }
}
