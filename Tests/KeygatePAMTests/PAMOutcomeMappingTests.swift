import KeygatePolicy
import Testing

@testable import KeygatePAM

/// The one table from PAM results to outcomes, row by row (pam-recipe §6).
@Suite struct PAMOutcomeMappingTests {
    static func result(
        _ code: Int32, _ step: PAMTransactionResult.Step = .authenticate, cancelled: Bool = false,
        lastError: String? = nil
    ) -> PAMTransactionResult {
        PAMTransactionResult(
            status: PAMStatus(rawValue: code), step: step, statusText: "text of \(code)", cancelled: cancelled,
            prompts: 1, lastError: lastError)
    }

    static func map(_ result: PAMTransactionResult) -> AuthenticationOutcome {
        PAMOutcomeMapping.outcome(of: result, factor: .passcode, service: "keygate")
    }

    @Test(arguments: [0, 7, 9, 20, 26])
    func cancelWinsOverEveryCode(_ code: Int32) {
        #expect(Self.map(Self.result(code, cancelled: true)) == .cancelled)
    }

    @Test func success() {
        #expect(Self.map(Self.result(0, .accountManagement)) == .proved(.passcode))
    }

    @Test(arguments: [7, 10, 11])
    func wrongCredentialsNeverRevealUnknownUsers(_ code: Int32) {
        #expect(Self.map(Self.result(code)) == .failed(.passcode, message: "authentication failed", cause: .pam(code)))
    }

    @Test(arguments: [6, 12, 13])
    func accountRefusalsCarryTheModulesMessage(_ code: Int32) {
        #expect(
            Self.map(Self.result(code, .accountManagement, lastError: "Your account has expired"))
                == .failed(.passcode, message: "Your account has expired", cause: .pam(code)))
        #expect(
            Self.map(Self.result(code, .accountManagement))
                == .failed(.passcode, message: "text of \(code)", cause: .pam(code)))
    }

    @Test(arguments: [9, 8, 4, 3, 26, 28])
    func unavailableNamesTheService(_ code: Int32) {
        let outcome = Self.map(Self.result(code, code == 26 ? .start : .authenticate))
        #expect(
            outcome
                == .unavailable(
                    "PAM service 'keygate': text of \(code) (\(PAMStatus(rawValue: code)))", cause: .pam(code)))
        #expect(outcome.status == .notAvailable)
    }

    @Test(arguments: [5, 19, 20, 25, 29, 99])
    func anythingElseFailsClosed(_ code: Int32) {
        guard case .failed(.passcode, let message, let cause) = Self.map(Self.result(code)) else {
            Issue.record("code \(code) must fail")
            return
        }
        #expect(message.contains("'keygate'"))
        #expect(cause == .pam(code))
    }

    @Test func statusesOfOutcomes() {
        #expect(AuthenticationOutcome.proved(.passcode).status == nil)
        #expect(AuthenticationOutcome.failed(.passcode, message: "x").status == .authFailed)
        #expect(AuthenticationOutcome.lockedOut(.biometry, until: nil).status == .authFailed)
        #expect(AuthenticationOutcome.cancelled.status == .userCanceled)
        #expect(AuthenticationOutcome.unavailable("x").status == .notAvailable)
        #expect(PAMStatus.authError.description == "PAM_AUTH_ERR 7")
        #expect(PAMStatus(rawValue: 77).name == "PAM_77")
    }
}
