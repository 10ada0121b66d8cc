import KeygatePolicy
import KeygateTesting
import Testing

/// Issue 10 point 1 (session 21): a read reuses its search's allow only while the context
/// still holds the state it was decided on; ``AuthenticationContext/holds(_:interaction:)``
/// answers that under the context's lock, without copying the state out, and leaves the
/// context's own interaction policy as it was.
@Suite struct ContextHoldsTests {
    @Test func theStateDecidedOnIsHeldUntilItChanges() {
        let clock = ManualClock()
        let context = AuthenticationContext(state: AuthenticationState(interaction: .allow), clock: clock)
        var decidedOn = context.state
        decidedOn.interaction = .fail
        #expect(context.holds(decidedOn, interaction: .fail))
        #expect(context.interaction == .allow, "the context's own policy is put back")
        #expect(!context.holds(decidedOn, interaction: .allow), "compared with the policy asked for")
        context.recordProof(of: .passcode)
        #expect(!context.holds(decidedOn, interaction: .fail), "a proof since changes the state")
        var now = context.state
        now.interaction = .fail
        #expect(context.holds(now, interaction: .fail))
        context.update { $0.device.isLocked = true }
        #expect(!context.holds(now, interaction: .fail), "so does a device change")
    }

    /// Session 22: the search keeps its state's generation instead of the state; every change
    /// moves it on, reading and comparing do not.
    @Test func theGenerationMovesOnWithEveryChangeOnly() {
        let context = AuthenticationContext(state: AuthenticationState(interaction: .allow), clock: ManualClock())
        let (state, generation) = context.stateAndGeneration
        #expect(state == context.state)
        #expect(context.isUnchanged(since: generation))
        _ = context.holds(state, interaction: .fail)
        _ = context.reading { $0.interaction }
        _ = context.interaction
        #expect(context.isUnchanged(since: generation), "reading is no change")
        context.recordProof(of: .passcode)
        #expect(!context.isUnchanged(since: generation), "a proof is a change")
        let afterProof = context.stateAndGeneration.generation
        context.interaction = .fail
        #expect(!context.isUnchanged(since: afterProof), "so is a new interaction policy")
        let afterPolicy = context.stateAndGeneration.generation
        context.update { $0.device.isLocked = true }
        #expect(!context.isUnchanged(since: afterPolicy), "and a device change")
    }

    /// `Proofs.isEmpty` answers what `all.isEmpty` does, for each factor alone.
    @Test(arguments: Factor.allCases)
    func proofsAreEmptyUntilOneIsRecorded(_ factor: Factor) {
        var proofs = Proofs()
        #expect(proofs.isEmpty && proofs.all.isEmpty)
        proofs.record(Proof(factor: factor, time: Timestamp(seconds: 1)))
        #expect(!proofs.isEmpty && proofs.all.count == 1)
    }
}
