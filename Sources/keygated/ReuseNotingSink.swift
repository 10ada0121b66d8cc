import KeygateAudit
import KeygatePolicy

/// One connection's way into its uid's trail: each record whose proofs include one the request
/// in flight took from ``ProofCache`` (rather than proving it through PAM in this request) gets
/// the note ``AuditNote/proofReused(_:window:)`` for that factor, so a read served by a reused
/// proof never reads like one the user just proved. Everything else is the trail's
/// (``UserAuditTrail``): sealing, durability, refusals.
struct ReuseNotingSink: AuditSink {
    let trail: UserAuditTrail
    let relay: PromptRelay

    @discardableResult
    func append(_ event: AuditEvent, at time: Timestamp) throws(KeygateError) -> AuditRecord {
        try trail.append(noted(event), at: time)
    }

    @discardableResult
    func append(contentsOf events: [AuditEvent], at time: Timestamp) throws(KeygateError) -> [AuditRecord] {
        try trail.append(contentsOf: events.map(noted), at: time)
    }

    /// `event` (and each decision in its `more`) with a note per reused factor it lists.
    private func noted(_ event: AuditEvent) -> AuditEvent {
        let reused = relay.reusedFactors
        guard !reused.isEmpty else { return event }
        let window = relay.scope?.reuseSeconds ?? 0
        func note(_ event: inout AuditEvent) {
            for proved in event.factors where reused.contains(FactorSet(proved.factor)) {
                event.notes.append(.proofReused(proved.factor, window: window))
            }
        }
        var event = event
        note(&event)
        for index in event.more.indices { note(&event.more[index]) }
        return event
    }
}
