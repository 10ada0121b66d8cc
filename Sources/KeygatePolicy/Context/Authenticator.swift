/// Proves the factors the evaluator asks for and records them in the context.
///
/// An implementation is given the ``Requirement`` of an `authenticate` decision, the prompt
/// for the operation, and the caller's context. It tries the alternatives in order (biometry
/// first, like `LAPolicy.deviceOwnerAuthentication`), falling back to the next one when a
/// factor is unavailable, fails or is locked out, and stops at once when the user cancels.
/// Every successful proof is recorded with ``AuthenticationContext/recordProof(of:)`` and every
/// failure with ``AuthenticationContext/recordFailure(of:policy:)``, so the evaluator sees them.
///
/// Duties of a conforming type:
/// - never report `proved` unless every factor of one alternative was proved and recorded;
/// - report a cancel as ``AuthenticationOutcome/cancelled``, whatever code the mechanism gave;
/// - report a prompt that could not be shown or answered for a reason the user did not choose
///   (no answer in time, no free prompt slot, nobody to ask) as
///   ``AuthenticationOutcome/notAllowed(_:cause:)``, with that reason as its cause;
/// - refuse to try a factor that the context says is locked out;
/// - never keep, log or return a passphrase.
public protocol Authenticator: Sendable {
    /// Proves one alternative of `requirement` and records the proofs in `context`.
    /// - Parameters:
    ///   - requirement: the alternatives from the evaluator's `authenticate` decision.
    ///   - prompt: why the user is asked, for example "Read the payment token".
    ///   - context: where proofs, failures and lockouts are recorded.
    func authenticate(_ requirement: Requirement, prompt: String, context: AuthenticationContext) async
        -> AuthenticationOutcome

    /// Proves one alternative of `requirement` for `purpose` (the prompt, and the operation
    /// and item that asked). The default calls ``authenticate(_:prompt:context:)`` with the
    /// prompt; implement this one to see which item and operation asked.
    func authenticate(_ requirement: Requirement, for purpose: AuthenticationPurpose, context: AuthenticationContext)
        async -> AuthenticationOutcome

    /// The mechanism that proves `factor`, for audit records (a PAM service name), if any.
    func mechanism(for factor: Factor) -> String?

    /// Who held the conversation of the attempt this authenticator just made, when it was not
    /// the requester itself (an authentication agent: its pid and program), for the attempt's
    /// audit record; nil when the requester was asked, or nobody.
    func lastAttemptAsked() -> String?
}

extension Authenticator {
    /// No named mechanism.
    public func mechanism(for factor: Factor) -> String? { nil }

    /// The requester was asked.
    public func lastAttemptAsked() -> String? { nil }

    /// Proves `requirement` with `purpose`'s prompt.
    public func authenticate(
        _ requirement: Requirement, for purpose: AuthenticationPurpose, context: AuthenticationContext
    ) async -> AuthenticationOutcome {
        await authenticate(requirement, prompt: purpose.prompt, context: context)
    }
}

/// Why a proof is asked for: the prompt shown, and the operation and item that asked (none
/// for a proof asked outside an item operation, such as `keygate prove`).
public struct AuthenticationPurpose: Hashable, Sendable {
    /// Why the user is asked, for example "Read the payment token".
    public var prompt: String
    /// The operation that needs the proof.
    public var operation: Operation?
    /// The item the operation is about.
    public var item: ItemIdentity?

    /// A purpose.
    public init(prompt: String, operation: Operation? = nil, item: ItemIdentity? = nil) {
        self.prompt = prompt
        self.operation = operation
        self.item = item
    }
}

/// How an authentication attempt ended.
public enum AuthenticationOutcome: Hashable, Sendable, CustomStringConvertible {
    /// These factors were proved and recorded.
    case proved(FactorSet)
    /// A factor was not proved (wrong password, no match, account refused); `message` is the
    /// mechanism's explanation when it gave one (never a secret), and `cause` what failed
    /// underneath when the mechanism knows (a PAM status).
    case failed(Factor, message: String, cause: KeygateError.Cause? = nil)
    /// The user cancelled.
    case cancelled
    /// The factor is locked out after too many failures, until `until` when known.
    case lockedOut(Factor, until: Timestamp?)
    /// The mechanism cannot be used (not configured, no device); the reason names it, and
    /// `cause` says what failed underneath when the mechanism knows (a PAM status).
    case unavailable(String, cause: KeygateError.Cause? = nil)
    /// No prompt could be shown or answered, for a reason the user did not choose (no answer
    /// in time, too many prompts waiting, nobody to ask): Apple's answer to a prompt that may
    /// not be shown. The reason names it; `cause` says which (a ``KeygateError/Condition``).
    /// Like a cancel, it ends the attempt: no other alternative is asked.
    case notAllowed(String, cause: KeygateError.Cause? = nil)

    /// The status a keychain call reports for this outcome, nil for `proved` (spec §4.5):
    /// cancel → `errSecUserCanceled`; failure and lockout → `errSecAuthFailed`;
    /// unavailable → `errSecNotAvailable`; not allowed → `errSecInteractionNotAllowed`.
    public var status: KeygateStatus? {
        switch self {
        case .proved: nil
        case .failed, .lockedOut: .authFailed
        case .cancelled: .userCanceled
        case .unavailable: .notAvailable
        case .notAllowed: .interactionNotAllowed
        }
    }

    /// What failed underneath a failure or an unavailable mechanism, when the mechanism said.
    public var cause: KeygateError.Cause? {
        switch self {
        case .failed(_, _, let cause), .unavailable(_, let cause), .notAllowed(_, let cause): cause
        case .proved, .cancelled, .lockedOut: nil
        }
    }

    /// A readable summary (no secrets).
    public var description: String {
        switch self {
        case .proved(let factors): "proved \(factors)"
        case .failed(let factor, let message, _): "\(factor) failed: \(message)"
        case .cancelled: "cancelled by the user"
        case .lockedOut(let factor, let until):
            "\(factor) is locked out after too many failures" + (until.map { " until \($0)" } ?? "")
        case .unavailable(let reason, _): "unavailable: \(reason)"
        case .notAllowed(let reason, _): "not allowed: \(reason)"
        }
    }
}

extension Requirement {
    /// Tries the alternatives in order with `prove` (one call per factor), as every
    /// authenticator must: the first alternative whose factors are all proved wins; a factor
    /// that fails, is locked out or is unavailable moves on to the next alternative; a cancel
    /// or a prompt not allowed ends everything at once. When no alternative succeeds, the last failure is returned.
    public func prove(_ prove: (Factor) async -> AuthenticationOutcome) async -> AuthenticationOutcome {
        var last = AuthenticationOutcome.unavailable("nothing can satisfy the requirement")
        alternatives: for alternative in alternatives {
            var proved = FactorSet()
            for factor in alternative.factors {
                let outcome = await prove(factor)
                switch outcome {
                case .proved(let factors):
                    proved.formUnion(factors)
                case .cancelled, .notAllowed:
                    return outcome
                case .failed, .lockedOut, .unavailable:
                    last = outcome
                    continue alternatives
                }
            }
            return .proved(proved)
        }
        return last
    }
}
