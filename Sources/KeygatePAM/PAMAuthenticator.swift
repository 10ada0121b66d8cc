public import KeygatePolicy

/// Proves presence through PAM: the passcode factor through one service (default
/// `keygate`, for example `pam_unix`), the biometry factor through another (default
/// `keygate-biometry`, for example `pam_fprintd` or Howdy), so Keygate knows which factor
/// was proved.
///
/// Each attempt runs on a fresh PAM handle (`pam_start`, `pam_authenticate`,
/// `pam_acct_mgmt`, `pam_end`) on a dedicated thread. The PAM user is the owner of this
/// process unless the program names another (a broker authenticating its peer's account,
/// ``init(configuration:source:user:caller:)``); ``caller`` sets `PAM_TTY` and `PAM_RUSER`,
/// never `PAM_RHOST`. Alternatives are tried in the requirement's order, biometry first, falling
/// back to the next one when biometry is unavailable, fails or is locked out, as
/// `LAPolicy.deviceOwnerAuthentication` does; a cancel ends the attempt at once.
///
/// Keygate keeps its own failure counter (``Configuration/attemptPolicy``), recorded in the
/// context, so N failures lock the factor out even when the PAM stack has no
/// `pam_faillock`; a locked-out factor is refused without asking PAM. libpam's own failure
/// delay is replaced (PAM_FAIL_DELAY) by ``Configuration/failureDelay``, applied after the
/// handle is closed.
///
/// ```swift
/// let authenticator = try PAMAuthenticator(source: TerminalPassphraseSource.open()!)
/// let outcome = await authenticator.authenticate(requirement, prompt: "Read the payment token", context: context)
/// ```
public struct PAMAuthenticator: Authenticator {
    /// Services, limits and the libpam to use.
    public struct Configuration: Sendable {
        /// The PAM service that proves the passcode factor.
        public var passcodeService: String
        /// The PAM service that proves the biometry factor.
        public var biometryService: String
        /// Keygate's failure counter.
        public var attemptPolicy: AttemptPolicy
        /// How long a failed attempt waits before it returns (Keygate's back-off).
        public var failureDelay: Duration
        /// The libpam to call.
        public var library: PAMLibrary
        /// Where failures are also counted beyond the context (shared by processes), if anywhere.
        public var ledger: (any AttemptLedger)?

        /// A configuration; the defaults are the `keygate` and `keygate-biometry` services,
        /// 5 failures in 15 minutes lock out for 5 minutes, a 2 s delay after a failure, and
        /// the system libpam.
        public init(
            passcodeService: String = "keygate", biometryService: String = "keygate-biometry",
            attemptPolicy: AttemptPolicy = AttemptPolicy(), failureDelay: Duration = .seconds(2),
            library: PAMLibrary = .system, ledger: (any AttemptLedger)? = nil
        ) {
            self.passcodeService = passcodeService
            self.biometryService = biometryService
            self.attemptPolicy = attemptPolicy
            self.failureDelay = failureDelay
            self.library = library
            self.ledger = ledger
        }
    }

    /// The configuration in force.
    public let configuration: Configuration
    /// Where answers come from.
    public let source: any PassphraseSource
    /// The PAM user: the owner of this process unless another was named.
    public let user: String
    /// How the caller is described to the modules (`PAM_TTY`, `PAM_RUSER`).
    public let caller: PAMCaller

    /// An authenticator for `user` (nil: the owner of this process), describing the caller as `caller`.
    ///
    /// Only a program that establishes `user` itself may name one (a root broker that looked up
    /// its peer's uid): whoever can choose the PAM user chooses whose password unlocks the items.
    /// - Throws: ``KeygatePolicy/KeygateError`` with `errSecNotAvailable` when `user` is nil and the
    ///   process owner has no passwd entry.
    public init(
        configuration: Configuration = Configuration(), source: any PassphraseSource, user: String? = nil,
        caller: PAMCaller = PAMCaller()
    ) throws(KeygateError) {
        self.configuration = configuration
        self.source = source
        if let user { self.user = user } else { self.user = try ProcessOwner.userName() }
        self.caller = caller
    }

    /// Proves one alternative of `requirement`, trying them in order.
    public func authenticate(_ requirement: Requirement, prompt: String, context: AuthenticationContext) async
        -> AuthenticationOutcome
    {
        await requirement.prove { factor in await prove(factor, prompt: prompt, context: context) }
    }

    /// The PAM service that proves `factor`.
    public func mechanism(for factor: Factor) -> String? {
        switch factor {
        case .passcode: configuration.passcodeService
        case .biometry: configuration.biometryService
        case .companion, .applicationPassword: nil
        }
    }

    /// Proves one factor with one PAM transaction and records the result in `context`.
    public func prove(_ factor: Factor, prompt: String, context: AuthenticationContext) async -> AuthenticationOutcome {
        let service: String
        switch factor {
        case .passcode: service = configuration.passcodeService
        case .biometry: service = configuration.biometryService
        case .companion, .applicationPassword:
            return .unavailable("PAM cannot prove the \(factor) factor")
        }
        let now = context.clock.now()
        // A context bound to a keychain counts in the keychain's ledger; the configured one
        // is used only for contexts without a ledger (for example `keygate prove`).
        let ledger = context.ledger == nil ? configuration.ledger : nil
        if let until = context.lockout(of: factor) ?? ledger?.lockout(of: factor, at: now) {
            return .lockedOut(factor, until: until)
        }
        if factor == .biometry && context.state.biometry.isLockedOut { return .lockedOut(.biometry, until: nil) }
        guard PAMServiceLocator.locate(service, library: configuration.library) != nil else {
            let places = PAMServiceLocator.directories(library: configuration.library).joined(separator: ", ")
            return .unavailable("PAM service '\(service)' is not configured (no file in \(places))")
        }
        let conversation = PAMConversation(source: source, service: service, factor: factor, reason: prompt)
        let library = configuration.library
        let user = self.user
        let caller = self.caller
        let result = await DedicatedThread.run {
            PAMTransaction.run(
                library: library, service: service, user: user, caller: caller, conversation: conversation)
        }
        let outcome = PAMOutcomeMapping.outcome(of: result, factor: factor, service: service)
        switch outcome {
        case .proved:
            context.recordProof(of: factor)
            ledger?.recordSuccess(of: factor)
        case .failed:
            let policy = configuration.attemptPolicy
            let contextLockout = context.recordFailure(of: factor, policy: policy)
            let sharedLockout = ledger?.recordFailure(of: factor, at: context.clock.now(), policy: policy)
            let lockedUntil = sharedLockout ?? contextLockout
            if configuration.failureDelay > .zero { try? await Task.sleep(for: configuration.failureDelay) }
            if let lockedUntil { return .lockedOut(factor, until: lockedUntil) }
        case .cancelled, .lockedOut, .unavailable, .notAllowed:
            break
        }
        return outcome
    }
}
