import KeygatePolicy

/// The one table from a PAM transaction's result to an authentication outcome.
///
/// 1. A cancel recorded by the conversation wins over any code (modules turn a cancelled
///    prompt into PAM_AUTHTOK_ERR or PAM_AUTHINFO_UNAVAIL).
/// 2. PAM_AUTH_ERR, PAM_USER_UNKNOWN and PAM_MAXTRIES are plain failures: an unknown user is
///    never revealed as such.
/// 3. PAM_PERM_DENIED, PAM_NEW_AUTHTOK_REQD and PAM_ACCT_EXPIRED from account management are
///    failures with the module's own message.
/// 4. PAM_AUTHINFO_UNAVAIL, PAM_CRED_INSUFFICIENT, PAM_SYSTEM_ERR, PAM_SERVICE_ERR, PAM_ABORT
///    and PAM_MODULE_UNKNOWN mean the mechanism is unavailable or misconfigured: the message
///    names the service.
/// 5. Anything else fails closed as a failure.
///
/// Every outcome but a proof or a cancel keeps the PAM status as its cause (`.pam(status)`).
enum PAMOutcomeMapping {
    static let failure: Set<PAMStatus> = [.authError, .userUnknown, .maxTries]
    static let accountRefusal: Set<PAMStatus> = [.permissionDenied, .newAuthTokenRequired, .accountExpired]
    static let unavailable: Set<PAMStatus> = [
        .authInfoUnavailable, .credentialsInsufficient, .systemError, .serviceError, .abort, .moduleUnknown,
    ]

    static func outcome(of result: PAMTransactionResult, factor: Factor, service: String) -> AuthenticationOutcome {
        if result.cancelled { return .cancelled }
        let status = result.status
        if status == .success { return .proved(FactorSet(factor)) }
        // Every failure keeps PAM's status as its cause, for callers that branch on it.
        let cause = KeygateError.Cause.pam(status.rawValue)
        if failure.contains(status) { return .failed(factor, message: "authentication failed", cause: cause) }
        if accountRefusal.contains(status) && result.step == .accountManagement {
            return .failed(factor, message: result.lastError ?? result.statusText, cause: cause)
        }
        if unavailable.contains(status) {
            return .unavailable("PAM service '\(service)': \(result.statusText) (\(status))", cause: cause)
        }
        return .failed(
            factor, message: "PAM service '\(service)' refused: \(result.statusText) (\(status))", cause: cause)
    }
}
