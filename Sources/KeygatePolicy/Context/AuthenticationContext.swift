import Synchronization

/// The live authentication context of a caller, modelled on `LAContext` (spec §4.4).
///
/// Pass one context to several operations to reuse its proofs, as
/// `kSecUseAuthenticationContext` does. It is thread-safe: authenticators record proofs
/// while the evaluator reads snapshots. Time comes from the injected ``clock``.
public final class AuthenticationContext: Sendable {
    private let storage: Mutex<AuthenticationState>
    /// Where proof times and ages are read.
    public let clock: any KeygateClock

    /// A context starting from `state`, reading time from `clock`.
    public init(state: AuthenticationState = AuthenticationState(), clock: any KeygateClock = SystemClock()) {
        self.storage = Mutex(state)
        self.clock = clock
    }

    /// A snapshot of the current state.
    public var state: AuthenticationState { storage.withLock { $0 } }

    /// Changes the state atomically.
    public func update<R>(_ body: (inout AuthenticationState) -> R) -> R {
        storage.withLock { body(&$0) }
    }

    /// The interaction policy (`allow`, `fail`, `skip`).
    public var interaction: InteractionPolicy {
        get { state.interaction }
        set { update { $0.interaction = newValue } }
    }

    /// The reuse window in seconds, clamped to 0…300.
    public var reuseSeconds: Int {
        get { state.reuseSeconds }
        set { update { $0.setReuseSeconds(newValue) } }
    }

    /// Records a successful proof of `factor` now. A biometry proof records the current
    /// enrollment set and clears the failure count; a passcode proof also lifts a biometry
    /// lockout, as on Apple devices. Does nothing once the context is invalidated.
    public func recordProof(of factor: Factor) {
        let now = clock.now()
        update { state in
            guard !state.isInvalidated else { return }
            let enrollment = factor == .biometry ? state.biometry.enrollment : nil
            state.proofs.record(Proof(factor: factor, time: now, enrollment: enrollment))
            state.attempts[factor] = AttemptRecord()
            switch factor {
            case .biometry:
                state.biometry.failedAttempts = 0
            case .passcode:
                // As on Apple devices, the passcode re-enables biometry.
                state.biometry.failedAttempts = 0
                state.biometry.isLockedOut = false
                state.attempts.biometry = AttemptRecord()
            case .companion, .applicationPassword:
                break
            }
        }
    }

    /// Records a failed attempt to prove `factor` now, under `policy`.
    ///
    /// A biometry failure also counts towards Apple's lockout: the fifth in a row locks
    /// biometry out until the passcode is proved.
    /// - Returns: the end of the lockout when this failure started one, else nil.
    @discardableResult
    public func recordFailure(of factor: Factor, policy: AttemptPolicy = AttemptPolicy()) -> Timestamp? {
        let now = clock.now()
        return update { state in
            guard !state.isInvalidated else { return nil }
            if factor == .biometry && !state.biometry.isLockedOut {
                state.biometry.failedAttempts += 1
                if state.biometry.failedAttempts >= BiometryState.lockoutThreshold { state.biometry.isLockedOut = true }
            }
            var record = state.attempts[factor]
            let locked = record.recordFailure(at: now, policy: policy)
            state.attempts[factor] = record
            return locked ? record.lockedUntil : nil
        }
    }

    /// Records a failed biometric match; the fifth in a row locks biometry out.
    /// - Returns: true when this failure caused Apple's lockout.
    @discardableResult
    public func recordBiometryFailure() -> Bool {
        let wasLockedOut = state.biometry.isLockedOut
        recordFailure(of: .biometry)
        return !wasLockedOut && state.biometry.isLockedOut
    }

    /// The end of `factor`'s lockout by Keygate's counter when it is locked out now, else nil.
    public func lockout(of factor: Factor) -> Timestamp? {
        let now = clock.now()
        let record = state.attempts[factor]
        return record.isLockedOut(at: now) ? record.lockedUntil : nil
    }

    /// Ends the context, like `LAContext.invalidate()`: every proof is forgotten and later
    /// evaluations that need one are denied with `errSecAuthFailed`. A second call does nothing.
    public func invalidate() {
        update { state in
            state.isInvalidated = true
            state.proofs = Proofs()
        }
    }
}
