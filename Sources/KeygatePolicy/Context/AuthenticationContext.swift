import Synchronization

/// The live authentication context of a caller, modelled on `LAContext` (spec §4.4).
///
/// Pass one context to several operations to reuse its proofs, as
/// `kSecUseAuthenticationContext` does. It is thread-safe: authenticators record proofs
/// while the evaluator reads snapshots.
///
/// A keychain binds every context it is given to its own clock and failure ledger
/// (``bind(clock:ledger:)``), so one keychain reads one time source and counts failures in
/// one place whatever context a call brings: five failures across five contexts lock a factor
/// out just as five in one do.
public final class AuthenticationContext: Sendable {
    private struct Binding: Sendable {
        var clock: any KeygateClock
        var clockIsExplicit: Bool
        var ledger: (any AttemptLedger)?
    }

    /// The state, and how many times it was changed (``update(_:)``): its generation.
    private struct Stored: Sendable {
        var state: AuthenticationState
        var generation: UInt64 = 0
    }

    private let storage: Mutex<Stored>
    private let binding: Mutex<Binding>
    /// The device whose biometry is read at the first need (``refreshDeferringBiometry(from:)``).
    let deferredBiometry = Mutex<(any DeviceStateSource)?>(nil)

    /// A context starting from `state`.
    /// - Parameters:
    ///   - state: the device state, proofs, reuse window and interaction policy to start from.
    ///   - clock: where proof times and ages are read; nil reads the system clock until a
    ///     keychain binds its own. A context given an explicit clock may only be used by a
    ///     keychain reading the same clock.
    ///   - ledger: where failures are also counted beyond this context; nil until a keychain
    ///     binds its own.
    public convenience init(
        state: AuthenticationState = AuthenticationState(), clock: (any KeygateClock)? = nil,
        ledger: (any AttemptLedger)? = nil
    ) {
        self.init(
            storing: state,
            binding: Binding(clock: clock ?? SystemClock(), clockIsExplicit: clock != nil, ledger: ledger))
    }

    /// A context holding `state`, bound as `binding` says (the clock and ledger put in place as
    /// they are: no optional existential wrapped and unwrapped on the way).
    private init(storing state: consuming AuthenticationState, binding: consuming Binding) {
        self.storage = Mutex(Stored(state: state))
        self.binding = Mutex(binding)
    }

    /// Where proof times and ages are read.
    public var clock: any KeygateClock { binding.withLock { $0.clock } }

    /// The shared failure ledger this context counts in, if any.
    public var ledger: (any AttemptLedger)? { binding.withLock { $0.ledger } }

    /// Binds the context to a keychain's `clock` and `ledger`, and copies the ledger's current
    /// lockouts into the state the evaluator reads.
    ///
    /// The ledger replaces any earlier one: failures are counted where the keychain using the
    /// context counts them.
    /// - Throws: `errSecParam` when the context was made with an explicit clock other than
    ///   `clock`: one keychain never mixes two time sources.
    public func bind(clock: any KeygateClock, ledger: any AttemptLedger) throws(KeygateError) {
        let mismatch = binding.withLock { binding -> Bool in
            if binding.clockIsExplicit && !Self.isSame(binding.clock, clock) { return true }
            binding.clock = clock
            binding.clockIsExplicit = true
            binding.ledger = ledger
            return false
        }
        if mismatch {
            throw KeygateError(
                .param, "the authentication context reads a different clock than the keychain it is used with")
        }
        let now = clock.now()
        update { Self.copyLockouts(from: ledger, at: now, into: &$0) }
    }

    /// A new context from `state`, already bound to `clock` and `ledger`: what
    /// ``bind(clock:ledger:)`` makes of a context made with that clock (the ledger's current
    /// lockouts copied into the state), without comparing a clock that cannot differ.
    package convenience init(state: AuthenticationState, boundTo clock: any KeygateClock, ledger: any AttemptLedger) {
        var state = state
        Self.copyLockouts(from: ledger, at: clock.now(), into: &state)
        self.init(storing: state, binding: Binding(clock: clock, clockIsExplicit: true, ledger: ledger))
    }

    /// Copies `ledger`'s lockouts at `now` into `state`, where they end later than its own.
    private static func copyLockouts(
        from ledger: any AttemptLedger, at now: Timestamp, into state: inout AuthenticationState
    ) {
        for factor in [Factor.passcode, .biometry] {
            guard let until = ledger.lockout(of: factor, at: now) else { continue }
            if (state.attempts[factor].lockedUntil ?? now) < until {
                state.attempts[factor].lockedUntil = until
            }
        }
    }

    /// Whether two clocks are the same source: the same instance for classes, the same type otherwise.
    private static func isSame(_ first: any KeygateClock, _ second: any KeygateClock) -> Bool {
        if type(of: first) is AnyClass, type(of: second) is AnyClass {
            return ObjectIdentifier(first as AnyObject) == ObjectIdentifier(second as AnyObject)
        }
        return type(of: first) == type(of: second)
    }

    /// A snapshot of the current state.
    public var state: AuthenticationState { storage.withLock { $0.state } }

    /// A snapshot of the current state with its generation: a number every change
    /// (``update(_:)``) moves on, so that a caller can tell later whether the state is still
    /// this one (``isUnchanged(since:)``) without keeping the snapshot or comparing it.
    package var stateAndGeneration: (state: AuthenticationState, generation: UInt64) {
        storage.withLock { ($0.state, $0.generation) }
    }

    /// Whether the state has not been changed since it had `generation`
    /// (``stateAndGeneration``): it is still that snapshot.
    package func isUnchanged(since generation: UInt64) -> Bool {
        storage.withLock { $0.generation == generation }
    }

    /// Whether the current state, with its interaction policy taken as `interaction`, is
    /// `state`: compared under the lock, without copying the current state out.
    public func holds(_ state: AuthenticationState, interaction: InteractionPolicy) -> Bool {
        storage.withLock { stored in
            // Set in place and put back before the lock is released: no one sees it.
            let own = stored.state.interaction
            stored.state.interaction = interaction
            defer { stored.state.interaction = own }
            return stored.state == state
        }
    }

    /// Runs `body` on the current state under the lock, without copying the state out.
    /// `body` must not use this context (its lock is held).
    public func reading<R>(_ body: (AuthenticationState) -> R) -> R {
        storage.withLock { body($0.state) }
    }

    /// Changes the state atomically (and moves its generation on, `stateAndGeneration`).
    public func update<R>(_ body: (inout AuthenticationState) -> R) -> R {
        storage.withLock { stored in
            defer { stored.generation &+= 1 }
            return body(&stored.state)
        }
    }

    /// The interaction policy (`allow`, `fail`, `skip`).
    public var interaction: InteractionPolicy {
        // Read in place: not a copy of the whole state for one field.
        get { storage.withLock { $0.state.interaction } }
        set { update { $0.interaction = newValue } }
    }

    /// The reuse window in seconds, clamped to 0…300.
    public var reuseSeconds: Int {
        get { state.reuseSeconds }
        set { update { $0.setReuseSeconds(newValue) } }
    }

    /// Records a successful proof of `factor` now. A biometry proof records the current
    /// enrollment set and clears the failure count; a passcode proof also lifts a biometry
    /// lockout, as on Apple devices; the shared ledger is cleared the same way. Does nothing
    /// once the context is invalidated.
    public func recordProof(of factor: Factor) {
        let now = clock.now()
        let recorded = update { state -> Bool in
            guard !state.isInvalidated else { return false }
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
            return true
        }
        if recorded { ledger?.recordSuccess(of: factor) }
    }

    /// Records a failed attempt to prove `factor` now, under `policy`.
    ///
    /// A biometry failure also counts towards Apple's lockout: the fifth in a row locks
    /// biometry out until the passcode is proved. The failure is also counted in the shared
    /// ledger, when the context has one.
    /// - Returns: the end of the lockout when this failure started one (here or in the
    ///   ledger), else nil.
    @discardableResult
    public func recordFailure(of factor: Factor, policy: AttemptPolicy = AttemptPolicy()) -> Timestamp? {
        let now = clock.now()
        let shared = ledger?.recordFailure(of: factor, at: now, policy: policy)
        let own = update { state -> Timestamp? in
            guard !state.isInvalidated else { return nil }
            if factor == .biometry && !state.biometry.isLockedOut {
                state.biometry.failedAttempts += 1
                if state.biometry.failedAttempts >= BiometryState.lockoutThreshold { state.biometry.isLockedOut = true }
            }
            var record = state.attempts[factor]
            let locked = record.recordFailure(at: now, policy: policy)
            if let shared, !record.isLockedOut(at: now) { record.lockedUntil = shared }
            state.attempts[factor] = record
            return locked ? record.lockedUntil : nil
        }
        return shared ?? own
    }

    /// Records a failed biometric match; the fifth in a row locks biometry out.
    /// - Returns: true when this failure caused Apple's lockout.
    @discardableResult
    public func recordBiometryFailure() -> Bool {
        let wasLockedOut = state.biometry.isLockedOut
        recordFailure(of: .biometry)
        return !wasLockedOut && state.biometry.isLockedOut
    }

    /// The end of `factor`'s lockout by Keygate's counter (this context's or the shared
    /// ledger's) when it is locked out now, else nil.
    public func lockout(of factor: Factor) -> Timestamp? {
        let now = clock.now()
        let record = state.attempts[factor]
        if record.isLockedOut(at: now) { return record.lockedUntil }
        return ledger?.lockout(of: factor, at: now)
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
