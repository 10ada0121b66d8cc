public import KeygatePolicy

/// One audited decision or authentication step: what was asked, about which item, what was
/// decided and why, which proofs counted, and who asked. Never a secret, never a passphrase.
public struct AuditEvent: Hashable, Sendable {
    /// What happened.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// An item was added (or refused).
        case add
        /// An item's value was read (or refused).
        case read
        /// An item was updated (or refused).
        case update
        /// An item was deleted (or refused).
        case delete
        /// A key signed (or was refused).
        case sign
        /// A key computed a shared key: ECDH or ECIES decryption (or was refused).
        case computeKey
        /// A backup was exported.
        case export
        /// A backup was imported.
        case `import`
        /// A dry-run evaluation (`keygate evaluate`).
        case evaluate
        /// An authentication attempt and its outcome.
        case authenticate
        /// A factor was locked out after too many failures.
        case lockout
        /// Stored data failed its integrity check.
        case tamper
        /// Organisation policy files were (re)loaded.
        case policyReload
        /// A program was refused an access group by an organisation grant.
        case entitlement
        /// The trail's head was brought forward over records written past it (a crash or a
        /// failed head write between a record and its head), automatically or by `keygate audit repair`.
        case recover

        /// The kind of a record deciding `action` (a `list` is recorded as a read: it decides
        /// what a read may see).
        public init(_ action: PolicyAction) {
            switch action {
            case .add: self = .add
            case .read, .list: self = .read
            case .update: self = .update
            case .delete: self = .delete
            case .sign: self = .sign
            case .computeKey: self = .computeKey
            case .export: self = .export
            case .import: self = .import
            }
        }

        /// The kind of a record deciding `operation`.
        public init(_ operation: Operation) { self.init(PolicyAction(operation)) }
    }

    /// What was decided, or how an authentication attempt ended: the record's `decision`.
    public enum Verdict: String, Hashable, Sendable, CaseIterable {
        /// The operation may proceed.
        case allow
        /// The operation was refused (the event's status says why).
        case deny
        /// A proof is needed first.
        case authenticate
        /// An authentication attempt proved its factors.
        case proved
        /// An authentication attempt failed (a wrong passcode, an unknown finger).
        case failed
        /// The user cancelled the prompt.
        case cancelled
        /// The factor is locked out after too many failures.
        case lockedOut
        /// The factor could not be used (no PAM service, no reader).
        case unavailable
        /// No prompt could be shown or answered (no answer in time, too many prompts waiting,
        /// nobody to ask): ``KeygatePolicy/AuthenticationOutcome/notAllowed(_:cause:)``.
        case notAllowed
        /// The trail's head was brought forward, or a partial record cut off.
        case recovered
        /// The store's anchor was replaced by this trail (`keygate audit repair --restart`).
        case restarted

        /// The verdict for an evaluator's outcome.
        public init(_ outcome: Decision.Outcome) {
            switch outcome {
            case .allow: self = .allow
            case .deny: self = .deny
            case .authenticate: self = .authenticate
            }
        }

        /// The verdict for an authentication attempt's outcome.
        public init(_ outcome: AuthenticationOutcome) {
            switch outcome {
            case .proved: self = .proved
            case .failed: self = .failed
            case .cancelled: self = .cancelled
            case .lockedOut: self = .lockedOut
            case .unavailable: self = .unavailable
            case .notAllowed: self = .notAllowed
            }
        }
    }

    /// A proof that counted, its age, and whether it was an earlier request's.
    public struct ProvedFactor: Hashable, Sendable {
        /// The factor.
        public var factor: Factor
        /// Its age in whole seconds when the decision was made.
        public var secondsAgo: Int
        /// The reuse window when the proof is an earlier request's, reused in this one
        /// (``KeygatePolicy/Proof/Origin/reused(window:)``); nil when it was proved for this request.
        /// An event listing such a proof carries the note ``AuditNote/proofReused(_:window:)``.
        public var reusedWithin: Int?

        /// A proof summary.
        public init(factor: Factor, secondsAgo: Int, reusedWithin: Int? = nil) {
            self.factor = factor
            self.secondsAgo = secondsAgo
            self.reusedWithin = reusedWithin
        }

        /// Every proof in `state`, with its age at `now` and whether it was reused.
        public static func all(in state: AuthenticationState, at now: Timestamp) -> [ProvedFactor] {
            // The usual read proves nothing: no list of proofs made to map to an empty one.
            if state.proofs.isEmpty { return [] }
            return state.proofs.all.map { proof in
                let reusedWithin: Int? =
                    switch proof.origin {
                    case .proved: nil
                    case .reused(let window): window
                    }
                return ProvedFactor(
                    factor: proof.factor, secondsAgo: Int(proof.time.wholeSeconds(until: now)),
                    reusedWithin: reusedWithin)
            }
        }
    }

    /// The fields, shared by copies of this event until one of them changes (copy on write):
    /// an event is moved through the auditor, held for its call and handed to the sink, and
    /// each of those copies is one reference, not a copy of every field.
    @usableFromInline
    var storage: AuditEventStorage

    /// Gives this event fields of its own before one changes.
    @inlinable
    mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
    }

    /// What happened.
    public var kind: Kind {
        get { storage.kind }
        _modify {
            makeUnique()
            yield &storage.kind
        }
    }
    /// The item, when there is one.
    public var item: ItemIdentity? {
        get { storage.item }
        _modify {
            makeUnique()
            yield &storage.item
        }
    }
    /// The access control decided on, when there is one: what ``accessControlText`` parses to
    /// (nil also for a text that does not parse, from a trail another version wrote). Setting it
    /// renders its text once, for the record.
    public var accessControl: AccessControl? {
        get { storage.accessControlText.flatMap { try? AccessControl(textForm: $0) } }
        set { accessControlText = newValue?.textForm }
    }
    /// The access control's text form, as the record holds it.
    public var accessControlText: String? {
        get { storage.accessControlText }
        _modify {
            makeUnique()
            yield &storage.accessControlText
        }
    }
    /// The organisation rules that matched.
    public var ruleIDs: [String] {
        get { storage.ruleIDs }
        _modify {
            makeUnique()
            yield &storage.ruleIDs
        }
    }
    /// `allow`, `deny`, `authenticate`, an authentication outcome (`proved`, `failed`,
    /// `cancelled`, `lockedOut`, `unavailable`), or a trail repair (`recovered`, `restarted`).
    public var decision: Verdict {
        get { storage.decision }
        _modify {
            makeUnique()
            yield &storage.decision
        }
    }
    /// The status, when not success.
    public var status: KeygateStatus? {
        get { storage.status }
        _modify {
            makeUnique()
            yield &storage.status
        }
    }
    /// The evaluator's reasons, in the order its checks ran.
    public var reasons: [DecisionReason] {
        get { storage.reasons }
        _modify {
            makeUnique()
            yield &storage.reasons
        }
    }
    /// What the facade, the organisation rules or the trail add beside the evaluator's
    /// reasons (a refusal, an invalidation, an authentication's outcome), in order. The line
    /// renders them after ``reasons``, in the same `reasons` array.
    public var notes: [AuditNote] {
        get { storage.notes }
        _modify {
            makeUnique()
            yield &storage.notes
        }
    }
    /// The proofs present in the context, with their ages.
    public var factors: [ProvedFactor] {
        get { storage.factors }
        _modify {
            makeUnique()
            yield &storage.factors
        }
    }
    /// The PAM service used, for authentication events.
    public var pamService: String? {
        get { storage.pamService }
        _modify {
            makeUnique()
            yield &storage.pamService
        }
    }
    /// The process that made the decision and wrote the record (`pid`): the one that asked in
    /// embedded mode, the broker when ``caller`` is set.
    public var processID: Int32 {
        get { storage.processID }
        _modify {
            makeUnique()
            yield &storage.processID
        }
    }
    /// The user of the process that made the decision (`uid`).
    public var userID: UInt32 {
        get { storage.userID }
        _modify {
            makeUnique()
            yield &storage.userID
        }
    }
    /// The executable of the process that made the decision, when known (`exe`).
    public var executable: String? {
        get { storage.executable }
        _modify {
            makeUnique()
            yield &storage.executable
        }
    }
    /// Who asked the broker for this decision, as the kernel reported it (`caller`); nil in
    /// embedded mode, where the process that decided is the one that asked.
    public var caller: AuditCaller? {
        get { storage.caller }
        _modify {
            makeUnique()
            yield &storage.caller
        }
    }
    /// The other items decided in the same call (a read, update or delete that matched
    /// several), each with its own item, access control, rules, decision, status, reasons and
    /// proofs, in order: one record names them all (`more`). Their kind is this event's.
    public var more: [AuditEvent] {
        get { storage.more }
        _modify {
            makeUnique()
            yield &storage.more
        }
    }

    /// This event's own decision followed by those in ``more``, each as an event of its own.
    public var decisions: [AuditEvent] {
        guard !more.isEmpty else { return [self] }
        var first = self
        first.more = []
        return [first]
            + more.map { entry in
                var entry = entry
                entry.pamService = pamService
                entry.processID = processID
                entry.userID = userID
                entry.executable = executable
                entry.caller = caller
                return entry
            }
    }

    /// An event. Each proof in `factors` that an earlier request made
    /// (``ProvedFactor/reusedWithin``) adds the note ``AuditNote/proofReused(_:window:)`` after
    /// `notes`, unless `notes` already has it: every record listing a reused proof says so.
    public init(
        kind: Kind, item: ItemIdentity? = nil, accessControl: AccessControl? = nil, ruleIDs: [String] = [],
        decision: Verdict,
        status: KeygateStatus? = nil, reasons: [DecisionReason] = [], notes: [AuditNote] = [],
        factors: [ProvedFactor] = [], pamService: String? = nil, processID: Int32 = 0, userID: UInt32 = 0,
        executable: String? = nil, caller: AuditCaller? = nil
    ) {
        storage = AuditEventStorage(
            kind: kind, item: item, accessControlText: accessControl?.textForm, ruleIDs: ruleIDs, decision: decision,
            status: status, reasons: reasons, notes: Self.notes(notes, naming: factors), factors: factors,
            pamService: pamService, processID: processID, userID: userID, executable: executable, caller: caller)
    }

    /// An event for `decision`, with its outcome, status and reasons, the organisation rules
    /// that matched (`ruleIDs`), and the facade's `notes`.
    ///
    /// Inlined: made where it is used, straight into the record it is passed to.
    @inlinable
    public init(
        _ kind: Kind, item: ItemIdentity?, accessControl: AccessControl?, ruleIDs: [String] = [], decision: Decision,
        notes: [AuditNote] = [], factors: [ProvedFactor]
    ) {
        storage = AuditEventStorage(
            kind: kind, item: item, accessControlText: accessControl?.textForm, ruleIDs: ruleIDs,
            decision: Verdict(decision.outcome), status: decision.status, reasons: Array(decision.reasons),
            notes: Self.notes(notes, naming: factors), factors: factors, pamService: nil, processID: 0, userID: 0,
            executable: nil, caller: nil)
    }

    /// `notes`, followed by ``AuditNote/proofReused(_:window:)`` for each proof in `factors`
    /// that an earlier request made, unless `notes` already has that note.
    @usableFromInline
    static func notes(_ notes: [AuditNote], naming factors: [ProvedFactor]) -> [AuditNote] {
        var all = notes
        for proved in factors {
            guard let window = proved.reusedWithin else { continue }
            let note = AuditNote.proofReused(proved.factor, window: window)
            if !notes.contains(note) { all.append(note) }
        }
        return all
    }

    /// The texts of the record's `reasons` array: the evaluator's reasons, then the notes.
    public var reasonTexts: [String] { reasons.map(\.description) + notes.map(\.description) }

    /// True when the evaluator gave a reason of `code`.
    public func gives(_ code: DecisionReason.Code) -> Bool { reasons.contains { $0.kind == code } }

    /// True when a note of `code` was added.
    public func gives(_ code: AuditNote.Code) -> Bool { notes.contains { $0.kind == code } }

    /// The reasons and notes read back from a record's `reasons` texts: each text is the
    /// evaluator's reason it renders, else a note (``AuditNote/init(text:kind:)``).
    static func reasonsAndNotes(_ texts: [String], kind: Kind) -> ([DecisionReason], [AuditNote]) {
        var reasons: [DecisionReason] = []
        var notes: [AuditNote] = []
        for text in texts {
            if notes.isEmpty, let reason = DecisionReason(description: text) {
                reasons.append(reason)
            } else {
                notes.append(AuditNote(text: text, kind: kind))
            }
        }
        return (reasons, notes)
    }
}

extension AuditEvent {
    /// Two events are equal when every field is (the same fields, shared or not).
    public static func == (lhs: AuditEvent, rhs: AuditEvent) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.sameFields(as: rhs.storage)
    }

    /// Hashes every field.
    public func hash(into hasher: inout Hasher) { storage.hashFields(into: &hasher) }
}

extension AuditEvent {
    /// This event with its sensitive fields redacted under `key`: the item's account, and the
    /// account where a note that may name the item (``AuditNote/namesItem``) names it, become
    /// `hmac-sha256:<hex>`. The evaluator's reasons and the other notes hold no names.
    public func redacted(under key: [UInt8]) -> AuditEvent {
        guard let item, !item.account.isEmpty else { return self }
        var event = self
        let redacted = "hmac-sha256:" + AuditCrypto.hmacSHA256Hex(Array(item.account.utf8), key: key)
        event.item?.account = redacted
        event.notes = notes.map { note in note.namesItem ? note.naming(item.account, as: redacted) : note }
        return event
    }
}

extension AuditNote {
    /// This note with `account` written as `replacement` in its message.
    func naming(_ account: String, as replacement: String) -> AuditNote {
        switch self {
        case .refused(let message): .refused(message.replacing(account, with: replacement))
        case .storeFailure(let message): .storeFailure(message.replacing(account, with: replacement))
        case .tampered(let message): .tampered(message.replacing(account, with: replacement))
        case .unrecognised(let text): .unrecognised(text.replacing(account, with: replacement))
        case .outcome(let outcome): .outcome(outcome.naming(account, as: replacement))
        case .lockedOut(let factor, let outcome): .lockedOut(factor, outcome.naming(account, as: replacement))
        default: self
        }
    }
}

extension AuthenticationOutcome {
    /// This outcome with `account` written as `replacement` in its message.
    func naming(_ account: String, as replacement: String) -> AuthenticationOutcome {
        switch self {
        case .failed(let factor, let message, let cause):
            .failed(factor, message: message.replacing(account, with: replacement), cause: cause)
        case .unavailable(let message, let cause):
            .unavailable(message.replacing(account, with: replacement), cause: cause)
        case .notAllowed(let message, let cause):
            .notAllowed(message.replacing(account, with: replacement), cause: cause)
        case .proved, .cancelled, .lockedOut: self
        }
    }
}
