import KeygatePAM
import KeygatePolicy
import KeygateProtocol
import KeygateServing

/// Proves presence inside the daemon for one connection's caller: PAM service `keygate`
/// (passcode) or `keygate-biometry` (biometry) for the peer uid's own account name
/// (`getpwuid_r`; a uid without one is denied), with `PAM_TTY` the caller's controlling
/// terminal and `PAM_RUSER` its user name (`PAM_RHOST` never set), and the conversation relayed
/// over the connection (``PromptRelay``).
///
/// Before PAM, a proof the daemon remembers for the caller's uid, session and terminal
/// (``ProofCache``) is reused when it lies within the request's window; a screen lock seen
/// for the caller's session clears those proofs first. A request that finds no free prompt
/// slot (``PromptSlots``) never reaches PAM: it is not allowed (`errSecInteractionNotAllowed`,
/// cause ``KeygateError/Condition/promptLimit``), as is a prompt left unanswered within
/// `prompt-timeout` (cause ``KeygateError/Condition/promptTimedOut``); the reason is set here,
/// where it happens, so the audit record and the error say the same. A proof taken from the cache enters the context
/// marked as reused within the request's window (``KeygatePolicy/Proof/Origin/reused(window:)``),
/// so each audit record listing it notes the reuse; a factor proved through PAM replaces it
/// with a fresh proof. Failures are counted in the keychain's ledger (the uid's persistent
/// ``DaemonAttemptLedger``), which the context is bound to.
///
/// A request whose client cannot be asked (its hello said so: a job without a terminal) has its
/// conversation held with the authentication agent of the caller's session instead
/// (``AgentRegistry``, ``AgentPassphraseSource``), which is shown the operation and item and the
/// caller's program and pid as the daemon knows them; with no agent there the attempt is not
/// allowed at once (cause ``KeygateError/Condition/noAgent``).
struct DaemonAuthenticator: Authenticator {
    /// The caller, from the kernel.
    let identity: PeerIdentity
    /// The caller's connection: its prompts, and the request in flight.
    let relay: PromptRelay
    /// What every connection's authenticator shares.
    let shared: AuthenticationServices
    /// The PAM services.
    let configuration: PAMAuthenticator.Configuration

    func mechanism(for factor: Factor) -> String? {
        switch factor {
        case .passcode: configuration.passcodeService
        case .biometry: configuration.biometryService
        case .companion, .applicationPassword: nil
        }
    }

    func authenticate(_ requirement: Requirement, prompt: String, context: AuthenticationContext) async
        -> AuthenticationOutcome
    {
        await authenticate(requirement, for: AuthenticationPurpose(prompt: prompt), context: context)
    }

    func authenticate(_ requirement: Requirement, for purpose: AuthenticationPurpose, context: AuthenticationContext)
        async -> AuthenticationOutcome
    {
        // Who this attempt's conversation is held with is the attempt's own: said again below
        // when an agent is asked, never carried over from an earlier attempt.
        relay.askedAgent = nil
        let request = relay.scope?.request
        let terminal = request?.caller.terminal
        let key = ProofCache.key(uid: identity.uid, session: identity.session, terminal: terminal)
        if let key {
            if context.state.device.isLocked {
                shared.proofs.clear(uid: key.uid, session: key.session)
            } else if let reused = reuse(requirement, key: key, window: request?.reuse ?? .none, context: context) {
                return reused
            }
        }
        let user: String
        do {
            user = try ProcessOwner.userName(of: identity.uid)
        } catch {
            Log.line("uid \(identity.uid) pid \(identity.pid): no user name for the uid; authentication denied")
            return .unavailable("uid \(identity.uid) has no user name to authenticate", cause: error.cause)
        }
        guard shared.slots.acquire(identity.uid) else {
            Log.line("uid \(identity.uid) pid \(identity.pid): prompt limit reached; request refused")
            return .notAllowed("too many prompts are waiting; try again later", cause: .condition(.promptLimit))
        }
        defer { shared.slots.release(identity.uid) }
        let source: any PassphraseSource
        var agentSource: AgentPassphraseSource?
        if request?.promptChannel ?? true {
            source = relay
        } else {
            guard let agent = shared.agents.agent(uid: identity.uid, session: identity.session) else {
                Log.line(
                    "uid \(identity.uid) pid \(identity.pid): no authentication agent for its session; request refused")
                return .notAllowed(
                    "the requester cannot be asked, and no authentication agent is registered for its session",
                    cause: .condition(.noAgent))
            }
            let asked = AgentPassphraseSource(
                agent: agent, purpose: Self.describe(purpose), program: identity.executable, pid: identity.pid,
                timeoutSeconds: relay.timeout)
            agentSource = asked
            source = asked
            relay.askedAgent = "pid \(agent.identity.pid) \(agent.identity.executable)"
        }
        let authenticator: PAMAuthenticator
        do {
            authenticator = try PAMAuthenticator(
                configuration: configuration, source: source, user: user,
                caller: PAMCaller(terminal: terminal?.name, remoteUser: user))
        } catch {
            return .unavailable("PAM cannot be used: \(error.message)", cause: error.cause)
        }
        var outcome = await authenticator.authenticate(requirement, prompt: purpose.prompt, context: context)
        if case .cancelled = outcome, relay.promptTimedOut || agentSource?.promptTimedOut == true {
            outcome = .notAllowed(
                "no answer to the prompt within \(relay.timeout) s", cause: .condition(.promptTimedOut))
        }
        switch outcome {
        case .failed, .lockedOut, .unavailable:
            // What PAM said, never what was typed (a PAM message or status name only).
            let cause = outcome.cause.map { " (\($0))" } ?? ""
            Log.line("uid \(identity.uid) pid \(identity.pid): authentication: \(outcome)\(cause)")
        case .proved, .cancelled, .notAllowed:
            break
        }
        if case .proved(let factors) = outcome {
            if let key {
                let proved = context.state.proofs.all.filter { factors.contains($0.factor) }
                shared.proofs.record(proved, key: key, now: context.clock.now())
            }
        }
        return outcome
    }

    /// A context holding every proof remembered for the caller's key within `request`'s
    /// window, for the facade to evaluate with before anything is asked (so a request that may
    /// not prompt is served by a proof it may reuse, as with Apple's reused `LAContext`); nil
    /// when the request asks for no window, the caller has no key, nothing is remembered, or
    /// `device` reports the screen locked (which forgets the session's proofs).
    func reuseContext(for request: DaemonRequest, device: (any DeviceStateSource)?) -> AuthenticationContext? {
        guard request.reuse.seconds > 0, let terminal = request.caller.terminal,
            let key = ProofCache.key(uid: identity.uid, session: identity.session, terminal: terminal)
        else { return nil }
        let now = SystemClock().now()
        let found = [Factor.passcode, .biometry].compactMap {
            shared.proofs.reusable($0, key: key, window: request.reuse.seconds, now: now)
        }
        guard !found.isEmpty else { return nil }
        if device?.snapshot(readingBiometry: false).device.isLocked ?? false {
            shared.proofs.clear(uid: key.uid, session: key.session)
            return nil
        }
        var state = AuthenticationState(reuseSeconds: request.reuse.seconds)
        for proof in found { state.proofs.record(proof) }
        return AuthenticationContext(state: state)
    }

    /// The first alternative of `requirement` whose factors all have a remembered proof within
    /// `window`: those proofs are put in the context (with the window, marked reused) and count
    /// as proved.
    private func reuse(
        _ requirement: Requirement, key: ProofCache.Key, window: ReuseWindow, context: AuthenticationContext
    ) -> AuthenticationOutcome? {
        let now = context.clock.now()
        for alternative in requirement.alternatives {
            let found = alternative.factors.compactMap {
                shared.proofs.reusable($0, key: key, window: window.seconds, now: now)
            }
            guard !alternative.factors.isEmpty, found.count == alternative.factors.count else { continue }
            context.update { state in
                state.setReuseSeconds(window.seconds)
                for proof in found { state.proofs.record(proof) }
            }
            var proved = FactorSet()
            for proof in found { proved.formUnion(FactorSet(proof.factor)) }
            return .proved(proved)
        }
        return nil
    }

    /// The authentication agent this request's last attempt was asked through.
    func lastAttemptAsked() -> String? { relay.askedAgent }

    /// What an agent is told the request is about, from the daemon's own view of it (never the
    /// prompt text a client chose): the operation and the item.
    static func describe(_ purpose: AuthenticationPurpose) -> String {
        let operation = purpose.operation.map { "\($0)" } ?? "a proof"
        return purpose.item.map { "\(operation) of \($0)" } ?? operation
    }
}

/// What the authenticators of every connection share: the prompt slots (``PromptSlots``), the
/// proofs remembered for reuse (``ProofCache``) and the registered authentication agents
/// (``AgentRegistry``).
struct AuthenticationServices: Sendable {
    let slots: PromptSlots
    let proofs: ProofCache
    let agents: AgentRegistry
}
