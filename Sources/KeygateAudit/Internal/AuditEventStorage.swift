public import KeygatePolicy

/// The fields of an ``AuditEvent``, shared by its copies until one changes (the event copies
/// them first: ``AuditEvent/makeUnique()``).
///
/// `@unchecked Sendable`: a storage is changed only through an event that holds the only
/// reference to it, so no two threads ever see one change. For the same reason its fields are
/// `@exclusivity(unchecked)`: no two accesses to one can overlap, and a class's stored
/// property is otherwise checked at run time on every access (the sink reads every field to
/// render a line: those checks cost more than the copies the storage saves).
@usableFromInline
final class AuditEventStorage: @unchecked Sendable {
    @exclusivity(unchecked) @usableFromInline var kind: AuditEvent.Kind
    @exclusivity(unchecked) @usableFromInline var item: ItemIdentity?
    @exclusivity(unchecked) @usableFromInline var accessControlText: String?
    @exclusivity(unchecked) @usableFromInline var ruleIDs: [String]
    @exclusivity(unchecked) @usableFromInline var decision: AuditEvent.Verdict
    @exclusivity(unchecked) @usableFromInline var status: KeygateStatus?
    @exclusivity(unchecked) @usableFromInline var reasons: [DecisionReason]
    @exclusivity(unchecked) @usableFromInline var notes: [AuditNote]
    @exclusivity(unchecked) @usableFromInline var factors: [AuditEvent.ProvedFactor]
    @exclusivity(unchecked) @usableFromInline var pamService: String?
    @exclusivity(unchecked) @usableFromInline var processID: Int32
    @exclusivity(unchecked) @usableFromInline var userID: UInt32
    @exclusivity(unchecked) @usableFromInline var executable: String?
    @exclusivity(unchecked) @usableFromInline var caller: AuditCaller?
    @exclusivity(unchecked) @usableFromInline var more: [AuditEvent]

    @usableFromInline
    init(
        kind: AuditEvent.Kind, item: ItemIdentity?, accessControlText: String?, ruleIDs: [String],
        decision: AuditEvent.Verdict, status: KeygateStatus?, reasons: [DecisionReason], notes: [AuditNote],
        factors: [AuditEvent.ProvedFactor], pamService: String?, processID: Int32, userID: UInt32, executable: String?,
        caller: AuditCaller?, more: [AuditEvent] = []
    ) {
        self.kind = kind
        self.item = item
        self.accessControlText = accessControlText
        self.ruleIDs = ruleIDs
        self.decision = decision
        self.status = status
        self.reasons = reasons
        self.notes = notes
        self.factors = factors
        self.pamService = pamService
        self.processID = processID
        self.userID = userID
        self.executable = executable
        self.caller = caller
        self.more = more
    }

    /// A storage of its own with the same fields.
    @usableFromInline
    func copy() -> AuditEventStorage {
        AuditEventStorage(
            kind: kind, item: item, accessControlText: accessControlText, ruleIDs: ruleIDs, decision: decision,
            status: status,
            reasons: reasons, notes: notes, factors: factors, pamService: pamService, processID: processID,
            userID: userID, executable: executable, caller: caller, more: more)
    }

    /// Whether every field equals `other`'s.
    func sameFields(as other: AuditEventStorage) -> Bool {
        kind == other.kind && item == other.item && accessControlText == other.accessControlText
            && ruleIDs == other.ruleIDs
            && decision == other.decision && status == other.status && reasons == other.reasons && notes == other.notes
            && factors == other.factors && pamService == other.pamService && processID == other.processID
            && userID == other.userID && executable == other.executable && caller == other.caller && more == other.more
    }

    /// Hashes every field, in declaration order.
    func hashFields(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(item)
        hasher.combine(accessControlText)
        hasher.combine(ruleIDs)
        hasher.combine(decision)
        hasher.combine(status)
        hasher.combine(reasons)
        hasher.combine(notes)
        hasher.combine(factors)
        hasher.combine(pamService)
        hasher.combine(processID)
        hasher.combine(userID)
        hasher.combine(executable)
        hasher.combine(caller)
        hasher.combine(more)
    }
}
