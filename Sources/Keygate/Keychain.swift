import Glibc
public import KeygateKeys
public import KeygatePolicy
public import KeygateStore

/// The gated keychain: SecItem-style `add`, `copyMatching`, `update` and `delete` over a
/// pluggable ``KeygateStore/ItemStore``, where every read of a value and every update is decided by the
/// ``KeygatePolicy/Evaluator`` first, and proofs are obtained from an ``KeygatePolicy/Authenticator``.
///
/// The keychain is opened with the access groups its caller may use (like the
/// `keychain-access-groups` entitlement); the first is the default group for new items.
/// Naming any other group is `errSecMissingEntitlement`; items in other groups are
/// invisible. Pass one ``KeygatePolicy/AuthenticationContext`` to several calls to reuse its proofs, as
/// `kSecUseAuthenticationContext` does; without one, each call gets a fresh context.
///
/// ```swift
/// let keychain = Keychain(store: try SQLiteItemStore(path: path), accessGroups: ["com.example.app"],
///                         authenticator: try PAMAuthenticator(source: terminal))
/// try await keychain.add(AddRequest(service: "api", account: "me", accessControl: presence, data: token))
/// let token = try await keychain.copyMatching(ItemQuery(service: "api", account: "me", returnData: true))
/// ```
public final class Keychain: Sendable {
    /// Where items live.
    public let store: any ItemStore
    /// Where key items live: the store itself when it keeps keys (``KeygateStore/KeyItemStore``),
    /// else nil, and every key call is `errSecUnimplemented`.
    public let keyStore: (any KeyItemStore)?
    /// Holds the private halves of key items and uses them once the key's access control allows.
    public let keeper: any KeyKeeper
    /// The access groups the caller may use; the first is the default.
    public let accessGroups: [String]
    /// Proves what the evaluator asks for.
    public let authenticator: any Authenticator
    /// Decides each operation.
    public let evaluator: Evaluator
    /// The device's current state, copied into every context before a decision (nil: the
    /// context's own state is used as it is).
    public let device: (any DeviceStateSource)?
    /// Organisation rules applied on top of each item's access control.
    public let organisationPolicy: any OrganisationPolicy
    /// Where time is read: for every decision, every proof recorded in a context this keychain
    /// uses, and item dates.
    public let clock: any KeygateClock
    /// Where failed authentication attempts are counted, for every call and every context
    /// (five failures lock a factor out whichever contexts they happened in).
    public let attempts: any AttemptLedger
    /// The interaction policy of the fresh context a call without one gets: `fail` for a
    /// keychain that has nobody to ask, so a read that needs a proof is
    /// `errSecInteractionNotAllowed` at once.
    public let defaultInteraction: InteractionPolicy
    /// Records every decision and authentication attempt; when required, a decision whose
    /// record cannot be written is denied.
    public let auditor: Auditor

    /// Each access group alone, as the list a call naming it searches (made once, not per call).
    let singleGroups: [[String]]

    /// The most authentication rounds one item may take before the call fails (Apple stops at 20).
    static let maximumRounds = 5

    /// Opens a keychain over `store` for a caller that may use `accessGroups`.
    ///
    /// Failures are counted in `attemptLedger`, else in the device's ledger
    /// (``KeygatePolicy/DeviceStateSource/attemptLedger``), else in a ledger this keychain keeps in memory.
    public init(
        store: any ItemStore, accessGroups: [String], authenticator: any Authenticator,
        evaluator: Evaluator = Evaluator(), device: (any DeviceStateSource)? = nil,
        organisationPolicy: any OrganisationPolicy = NoOrganisationPolicy(), clock: any KeygateClock = SystemClock(),
        attemptLedger: (any AttemptLedger)? = nil, defaultInteraction: InteractionPolicy = .allow,
        auditor: Auditor? = nil, keeper: any KeyKeeper = SoftwareKeyKeeper()
    ) {
        self.store = store
        self.keyStore = store as? any KeyItemStore
        self.keeper = keeper
        self.accessGroups = accessGroups
        self.singleGroups = accessGroups.map { [$0] }
        self.authenticator = authenticator
        self.evaluator = evaluator
        self.device = device
        self.organisationPolicy = organisationPolicy
        self.clock = clock
        self.attempts = attemptLedger ?? device?.attemptLedger ?? InMemoryAttemptLedger()
        self.defaultInteraction = defaultInteraction
        self.auditor = auditor ?? Auditor(sink: NoopAuditSink(), isRequired: false, clock: clock)
    }

    /// This keychain with `auditor` (a facade call's, ``KeygateAudit/Auditor/collecting(_:)``)
    /// in place of its own: what one call's steps run on, so its records are collected for that
    /// call and its item write commits them (``KeygateAudit/Auditor/call``). Itself when the
    /// auditor is its own (auditing off, or already the call's).
    func within(_ auditor: Auditor) -> Keychain {
        auditor.call === self.auditor.call ? self : Keychain(self, auditor: auditor)
    }

    /// Runs `body` (one facade call's steps) on this keychain within one audit call
    /// (``KeygateAudit/Auditor/collecting(_:)``): its records are written, or held for its item
    /// write, before the call returns.
    func inCall(_ body: (Keychain) async throws(KeygateError) -> Void) async throws(KeygateError) {
        try await auditor.collectingCall { (auditor) async throws(KeygateError) in try await body(within(auditor)) }
    }

    /// A copy of `keychain` recording through `auditor`.
    private init(_ keychain: Keychain, auditor: Auditor) {
        store = keychain.store
        keyStore = keychain.keyStore
        keeper = keychain.keeper
        accessGroups = keychain.accessGroups
        singleGroups = keychain.singleGroups
        authenticator = keychain.authenticator
        evaluator = keychain.evaluator
        device = keychain.device
        organisationPolicy = keychain.organisationPolicy
        clock = keychain.clock
        attempts = keychain.attempts
        defaultInteraction = keychain.defaultInteraction
        self.auditor = auditor
    }

    // MARK: - Shared steps

    /// The context for one call: the caller's, or a fresh one; bound to this keychain's clock
    /// and ledger, and refreshed from the device (its biometry read only when an item or rule
    /// of the call involves it: ``readBiometry(for:requirements:context:)``).
    /// - Throws: `errSecParam` when the caller's context reads another clock.
    func context(_ given: AuthenticationContext?) throws(KeygateError) -> AuthenticationContext {
        let context: AuthenticationContext
        if let given {
            try given.bind(clock: clock, ledger: attempts)
            context = given
        } else {
            // A new context is made bound: no clock of another keychain to compare.
            context = AuthenticationContext(
                state: AuthenticationState(interaction: defaultInteraction), boundTo: clock, ledger: attempts)
        }
        if let device { context.refreshDeferringBiometry(from: device) }
        return context
    }

    /// Audits a request refused before any item was looked at (parameters, entitlements, the
    /// context): a refusal is a decision too, recorded with the operation, what the request
    /// named and the status.
    /// - Returns: the error to throw: `error`, or the audit failure when the record cannot be written.
    func refused(
        _ kind: AuditEvent.Kind, service: String?, account: String?, accessGroup: String?, _ error: KeygateError
    ) -> KeygateError {
        do {
            try auditor.record(
                AuditEvent(
                    kind: kind,
                    item: ItemIdentity(accessGroup: accessGroup ?? "", account: account ?? "", service: service ?? ""),
                    decision: .deny, status: error.status, notes: [.refused(error.message)]))
            return error
        } catch {
            return error
        }
    }

    /// The groups a call may touch: the named one (which must be entitled) or all of them.
    func groups(_ named: String?) throws(KeygateError) -> [String] {
        guard !accessGroups.isEmpty else {
            throw KeygateError(.missingEntitlement, "the caller has no keychain access groups")
        }
        guard let named else { return try entitledGroups(accessGroups, named: false) }
        // Byte for byte, as Apple compares names: an NFD spelling of an entitled NFC group
        // is another group (String's == would call them equal).
        guard let index = accessGroups.firstIndex(where: { Self.sameBytes($0, named) }) else {
            throw KeygateError(.missingEntitlement, "the caller may not use access group '\(named)'")
        }
        // The group's own one-element list, made once (the same bytes as `named`).
        return try entitledGroups(singleGroups[index], named: true)
    }

    /// Whether two strings are the same UTF-8 bytes (compared in place by `memcmp`, not byte by
    /// byte through the generic sequence; a small string, which has no contiguous storage to lend,
    /// is compared from a copy of its bytes on the stack).
    static func sameBytes(_ first: String, _ second: String) -> Bool {
        guard first.utf8.count == second.utf8.count else { return false }
        var first = first
        var second = second
        return first.withUTF8 { one in
            second.withUTF8 { other in
                one.count == other.count
                    && (one.isEmpty || memcmp(one.baseAddress!, other.baseAddress!, one.count) == 0)
            }
        }
    }

    /// The effective interaction policy of a call: `skip` from the query, else `fail` if the
    /// query or the context says so, else `allow`.
    static func interaction(_ query: InteractionPolicy?, _ context: AuthenticationContext) -> InteractionPolicy {
        if query == .skip { return .skip }
        if query == .fail || context.interaction == .fail { return .fail }
        return context.interaction == .skip && query == nil ? .skip : .allow
    }

    /// What happened when an item was gated.
    enum Gate {
        /// Allowed; for an add, with the enrollment set to bind.
        case allowed(Decision)
        /// Needs a prompt and the query says skip: leave the item out.
        case skipped
        /// The item no longer exists for this request (passcode removed, enrollment changed).
        case invalidated
    }

    /// Evaluates `operation` on `control`, proving what is asked (up to ``maximumRounds``),
    /// until the decision is allow; throws the denial's status otherwise. Every decision and
    /// every authentication attempt is audited first: when the record cannot be written (and
    /// auditing is required) the call fails instead.
    ///
    /// A read whose search already allowed the item on the context's current state does not
    /// come here: ``gateAllowed(_:_:_:item:context:ruleIDs:)`` records that allow (an allow does
    /// not depend on the interaction policy). The prompt is made only when someone is asked.
    ///
    /// `first`, when given, is the first round's decision, made already on the context's current
    /// state with `interaction` (the call's search made it: ``Candidates/reusable(_:in:)``), so
    /// the item is evaluated once before anyone is asked, not twice.
    func gate(
        _ control: AccessControl, _ operation: Operation, item: ItemIdentity, context: AuthenticationContext,
        interaction: InteractionPolicy, prompt: @autoclosure () -> String, audited kind: AuditEvent.Kind? = nil,
        ruleIDs: [String] = [], first: Decision? = nil, notes: [AuditNote] = []
    ) async throws(KeygateError) -> Gate {
        let kind = kind ?? AuditEvent.Kind(operation)
        readBiometry(for: control, context: context)
        var decided = first
        for _ in 0...Self.maximumRounds {
            var state = context.state
            state.interaction = interaction
            let now = context.clock.now()
            let decision = decided.take() ?? evaluator.evaluate(control, operation: operation, state: state, now: now)
            try auditor.record(
                AuditEvent(
                    kind, item: item, accessControl: control, ruleIDs: ruleIDs, decision: decision, notes: notes,
                    factors: AuditEvent.ProvedFactor.all(in: state, at: now)))
            switch decision.outcome {
            case .allow:
                return .allowed(decision)
            case .deny(let status):
                switch decision.denial {
                case .invalidated: return .invalidated
                case .skipped: return .skipped
                case nil: throw KeygateError(status, "\(operation) of \(item) refused: \(decision.explanation)")
                }
            case .authenticate(let requirement):
                let outcome = await authenticate(
                    requirement, prompt: prompt(), operation: operation, item: item, context: context)
                if case .proved = outcome { continue }
                throw KeygateError(
                    outcome.status ?? .authFailed, "\(operation) of \(item): \(outcome)", cause: outcome.cause)
            }
        }
        throw KeygateError(.authFailed, "\(operation) of \(item): too many authentication rounds")
    }

    /// The gate's one round for an item the call's search already allowed on the context's
    /// current state (`decision`, ``Candidates/reusable(_:in:)``): the record
    /// ``gate(_:_:item:context:interaction:prompt:audited:ruleIDs:first:)`` would write for it,
    /// without evaluating again, without an `await`, and without copying the state out (its
    /// proofs are listed under the context's lock).
    /// - Throws: the audit failure when the record cannot be written (and auditing is required).
    func gateAllowed(
        _ decision: Decision, _ control: AccessControl, _ operation: Operation, item: ItemIdentity,
        context: AuthenticationContext, ruleIDs: [String]
    ) throws(KeygateError) {
        readBiometry(for: control, context: context)
        let now = clock.now()  // the context's: it is bound to this keychain's clock
        // Made in the call, so it is moved into the auditor, not copied.
        try auditor.record(
            AuditEvent(
                AuditEvent.Kind(operation), item: item, accessControl: control, ruleIDs: ruleIDs, decision: decision,
                factors: context.reading { AuditEvent.ProvedFactor.all(in: $0, at: now) }))
    }

    /// Runs the authenticator and audits the attempt (and a lockout, when one starts).
    func authenticate(
        _ requirement: Requirement, prompt: String, operation: Operation?, item: ItemIdentity?,
        context: AuthenticationContext
    ) async -> AuthenticationOutcome {
        let purpose = AuthenticationPurpose(prompt: prompt, operation: operation, item: item)
        let outcome = await authenticator.authenticate(requirement, for: purpose, context: context)
        let now = context.clock.now()
        let decision = AuditEvent.Verdict(outcome)
        let factor: Factor? =
            switch outcome {
            case .failed(let factor, _, _), .lockedOut(let factor, _): factor
            case .proved(let factors): factors.factors.first
            case .cancelled, .unavailable, .notAllowed: requirement.alternatives.first?.factors.first
            }
        var notes: [AuditNote] = [.requirement(requirement), .outcome(outcome)]
        if let asked = authenticator.lastAttemptAsked() { notes.append(.askedAgent(asked)) }
        let event = AuditEvent(
            kind: .authenticate, item: item, decision: decision, status: outcome.status, notes: notes,
            factors: AuditEvent.ProvedFactor.all(in: context.state, at: now),
            pamService: factor.flatMap { authenticator.mechanism(for: $0) })
        do {
            try auditor.record(event)
            if case .lockedOut(let factor, _) = outcome {
                var lockout = event
                lockout.kind = .lockout
                // The proofs it lists stay named as reused where they were (``AuditEvent/init``).
                lockout.notes = [.lockedOut(factor, outcome)] + event.notes.filter { $0.kind == .proofReused }
                try auditor.record(lockout)
            }
        } catch {
            return .unavailable(error.message)
        }
        return outcome
    }

    /// Audits a store failure after an allowed decision (a collision, a tampered value).
    func auditFailure(
        _ kind: AuditEvent.Kind, _ identity: ItemIdentity, _ control: AccessControl?, _ error: KeygateError
    ) {
        if error.status == .decode {
            try? auditor.record(
                AuditEvent(
                    kind: .tamper, item: identity, accessControl: control, decision: .deny,
                    status: error.status, notes: [.tampered(error.message)]))
        }
        try? auditor.record(
            AuditEvent(
                kind: kind, item: identity, accessControl: control, decision: .deny,
                status: error.status, notes: [.storeFailure(error.message)]))
    }

    /// The refusal of a record the call's search found damaged (its stored access control
    /// cannot be trusted), with the tamper audited.
    func refuseDamaged(_ record: ItemRecord, _ damage: String, _ kind: AuditEvent.Kind) -> KeygateError {
        let error = KeygateError(.decode, damage, condition: .damagedItem)
        auditFailure(kind, record.fields.identity, nil, error)
        return error
    }

}
