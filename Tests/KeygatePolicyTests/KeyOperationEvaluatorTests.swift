import KeygatePolicy
import KeygateTesting
import Testing

/// Spec §9.5: which constraint guards a key's sign (`osgn`) and compute-key (`ock`) operations,
/// decided by the same evaluator, proofs and reuse windows as item reads.
@Suite struct KeyOperationEvaluatorTests {
    let evaluator = Evaluator()

    func context(_ clock: ManualClock, reuse: Int = 0) -> AuthenticationContext {
        AuthenticationContext(state: AuthenticationState(reuseSeconds: reuse), clock: clock)
    }

    /// 9.5.1, 9.5.2: `privateKeyUsage` with `userPresence` puts the constraint on sign and
    /// compute-key; a proof satisfies it, and the key's data is not readable as an item (9.5.1).
    @Test(arguments: [Operation.sign, .computeKey])
    func privateKeyUsageGuardsKeyOperations(operation: Operation) throws {
        let clock = ManualClock()
        let context = context(clock)
        let control = try AccessControl(
            protection: .whenUnlockedThisDeviceOnly, flags: [.userPresence, .privateKeyUsage])
        let first = evaluator.evaluate(control, operation: operation, context: context)
        #expect(first.requirement != nil, "\(first)")
        context.recordProof(of: .passcode)
        #expect(evaluator.evaluate(control, operation: operation, context: context).isAllowed)
        #expect(evaluator.evaluate(control, operation: .read, context: context).outcome == .deny(.authFailed))
        #expect(evaluator.evaluate(control, operation: .delete, context: context).isAllowed)
    }

    /// 9.5.4: no flags at all is `dacl(true)`: every key operation is allowed without a proof.
    @Test(arguments: [Operation.sign, .computeKey])
    func noFlagsAllowsKeyOperations(operation: Operation) throws {
        let control = try AccessControl(protection: .whenUnlocked)
        #expect(evaluator.evaluate(control, operation: operation, context: context(ManualClock())).isAllowed)
    }

    /// 9.5.5: a constraint without `privateKeyUsage` leaves sign and compute-key no entry and no
    /// `dacl`: denied (LA −1009 → errSecAuthFailed) even with a fresh proof, naming the ACL op.
    @Test(arguments: [Operation.sign, .computeKey])
    func aConstraintWithoutPrivateKeyUsageDeniesKeyOperations(operation: Operation) throws {
        let clock = ManualClock()
        let context = context(clock)
        context.recordProof(of: .passcode)
        let control = try AccessControl(protection: .whenUnlocked, flags: .userPresence)
        let decision = evaluator.evaluate(control, operation: operation, context: context)
        #expect(decision.outcome == .deny(.authFailed))
        #expect(decision.reasons.contains(.operationNotGranted(operation)))
        #expect(decision.explanation.contains("'\(operation.aclName)'"), "\(decision.explanation)")
    }

    /// 9.8.2 (device locked, `ak` key): the class decides when a key may be used; locked is
    /// errSecInteractionNotAllowed.
    @Test func aLockedDeviceRefusesAWhenUnlockedKey() throws {
        let control = try AccessControl(protection: .whenUnlocked, flags: .privateKeyUsage)
        let locked = AuthenticationContext(
            state: AuthenticationState(device: DeviceState(isLocked: true)), clock: ManualClock())
        #expect(evaluator.evaluate(control, operation: .sign, context: locked).outcome == .deny(.interactionNotAllowed))
    }

    /// The reuse window counts for key operations as for reads: a proof older than it asks again.
    @Test func theReuseWindowHoldsForSigning() throws {
        let clock = ManualClock()
        let context = context(clock, reuse: 10)
        let control = try AccessControl(protection: .whenUnlocked, flags: [.devicePasscode, .privateKeyUsage])
        context.recordProof(of: .passcode)
        clock.advance(seconds: 9)
        #expect(evaluator.evaluate(control, operation: .sign, context: context).isAllowed)
        clock.advance(seconds: 2)
        #expect(evaluator.evaluate(control, operation: .sign, context: context).requirement == Requirement([.passcode]))
    }
}
