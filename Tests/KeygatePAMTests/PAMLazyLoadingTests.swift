import CPAM
import KeygatePolicy
import Testing

@testable import KeygatePAM

/// libpam is opened at the first PAM transaction instead of being linked (issue 10 point 4: a
/// plain `keygate get` no longer loads it at start-up). When it cannot be opened, every
/// transaction fails closed.
@Suite struct PAMLazyLoadingTests {
    /// The table used when libpam cannot be loaded ends the transaction at `pam_start` with
    /// `PAM_SYSTEM_ERR`, and the factor is unavailable, never proved.
    @Test func aLibpamThatCannotBeLoadedMakesTheFactorUnavailable() {
        let source = ProgrammaticPassphraseSource(passphrase: "s3cret")
        let conversation = PAMConversation(source: source, service: "keygate", factor: .passcode, reason: "Read")
        let result = PAMTransaction.run(
            library: PAMLibrary(functions: .unavailable, name: "libpam"), service: "keygate", user: "nobody",
            conversation: conversation)
        #expect(result.status.rawValue == PAM_SYSTEM_ERR)
        #expect(result.step == .start)
        #expect(source.prompts.isEmpty)
        let outcome = PAMOutcomeMapping.outcome(of: result, factor: .passcode, service: "keygate")
        guard case .unavailable(let reason, let cause) = outcome else {
            Issue.record("expected unavailable, got \(outcome)")
            return
        }
        #expect(reason.contains("PAM service 'keygate'"))
        #expect(cause == .pam(PAM_SYSTEM_ERR))
    }
}
