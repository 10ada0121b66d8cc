import KeygatePolicy
import KeygateStore

// Applying the organisation policy: per-item verdicts (forbid, minimums, extra factors,
// freshness bounds) and access-group grants. Every verdict that names rules is audited with
// their ids; a refusal names them in its error.
extension Keychain {
    /// The organisation's decision on `action` for the item with `fields`: asked once per item
    /// and operation; ``refuseEarly(_:_:_:)`` and ``review(_:_:_:context:interaction:prompt:)`` act on it.
    func decide(_ action: PolicyAction, _ fields: ItemFields) -> PolicyDecision {
        organisationPolicy.review(action, item: fields)
    }

    /// Refuses before anything else is decided or anyone is asked for a proof, when `decision`
    /// denies (a forbid, or an item below a minimum).
    /// - Returns: the ids of the rules that add to the item's own access control, so the
    ///   evaluator's records name them too.
    func refuseEarly(_ decision: PolicyDecision, _ action: PolicyAction, _ fields: ItemFields) throws(KeygateError)
        -> [String]
    {
        if case .deny(let status) = decision.outcome {
            try refuse(action, fields, decision: decision, status: status)
        }
        return decision.decidingRules
    }

    /// Applies `decision` (the organisation's, on `action` for this item) once the item's own
    /// access control allowed it: may prove extra requirements, or the item's access control
    /// again when a freshness bound makes older proofs not count. A decision that adds nothing
    /// needs no call (and no await).
    /// - Returns: false when a prompt is needed and the call says `skip` (leave the item out).
    @discardableResult
    func review(
        _ decision: PolicyDecision, _ action: PolicyAction, _ fields: ItemFields, context: AuthenticationContext,
        interaction: InteractionPolicy, prompt: @autoclosure () -> String
    ) async throws(KeygateError) -> Bool {
        if case .deny(let status) = decision.outcome {
            try refuse(action, fields, decision: decision, status: status)
        }
        if decision.addsNothing { return true }
        return try await meet(
            action, fields, decision: decision, context: context, interaction: interaction, prompt: prompt())
    }

    /// Audits and throws a refusal naming the rules.
    private func refuse(
        _ action: PolicyAction, _ fields: ItemFields, decision: PolicyDecision, status: KeygateStatus
    ) throws(KeygateError) -> Never {
        let ruleIDs = decision.decidingRules
        let names = ruleIDs.map { "'\($0)'" }.joined(separator: ", ")
        let error = KeygateError(
            status,
            "\(action) of \(fields.identity) denied by rule\(ruleIDs.count == 1 ? "" : "s") \(names): \(decision.summary)"
        )
        try auditor.record(
            AuditEvent(
                kind: AuditEvent.Kind(action), item: fields.identity,
                accessControl: fields.accessControl, ruleIDs: ruleIDs, decision: .deny, status: status,
                notes: decision.reasons.map { .organisationRule($0) }))
        throw error
    }

    /// The requirements still unmet under the freshness bound: the item's own access control
    /// (for operations that use proofs) and each extra requirement.
    private func unmet(
        _ action: PolicyAction, _ fields: ItemFields, requirements: [Requirement], freshWithin: Int?,
        context: AuthenticationContext
    ) throws(KeygateError) -> [Requirement] {
        readBiometry(for: CollectionOfOne(fields.accessControl), requirements: requirements, context: context)
        let now = context.clock.now()
        var state = context.state
        if let freshWithin { state.setReuseSeconds(min(state.reuseSeconds, freshWithin)) }
        var unmet: [Requirement] = []
        // Reading and exporting decrypt, as an update does: the item's own control is asked
        // again under the bound.
        if freshWithin != nil, action == .read || action == .update || action == .export {
            state.interaction = .allow
            let decision = evaluator.evaluate(
                fields.accessControl, operation: action.evaluatedOperation, state: state, now: now)
            switch decision.outcome {
            case .allow: break
            case .authenticate(let requirement): unmet.append(requirement)
            case .deny(let status):
                throw KeygateError(status, "\(action) of \(fields.identity) refused: \(decision.explanation)")
            }
        }
        let fresh = state.freshFactors(at: now)
        unmet += requirements.filter { !$0.isSatisfied(by: fresh) }
        return unmet
    }

    private func meet(
        _ action: PolicyAction, _ fields: ItemFields, decision: PolicyDecision, context: AuthenticationContext,
        interaction: InteractionPolicy, prompt: String
    ) async throws(KeygateError) -> Bool {
        let ruleIDs = decision.decidingRules
        let requirements = decision.requirements.map(\.requirement)
        let freshWithin = decision.freshWithin
        let names = ruleIDs.map { "'\($0)'" }.joined(separator: ", ")
        var pending = try unmet(
            action, fields, requirements: requirements, freshWithin: freshWithin, context: context)
        let now = context.clock.now()
        try auditor.record(
            AuditEvent(
                kind: AuditEvent.Kind(action), item: fields.identity,
                accessControl: fields.accessControl, ruleIDs: ruleIDs,
                decision: pending.isEmpty ? .allow : .authenticate,
                notes: decision.reasons.map { .organisationRule($0) } + pending.map { .needs($0) },
                factors: AuditEvent.ProvedFactor.all(in: context.state, at: now)))
        if pending.isEmpty { return true }
        switch interaction {
        case .allow: break
        case .skip: return false
        case .fail:
            throw KeygateError(
                .interactionNotAllowed, "rule \(names) needs \(pending[0]), and prompting is not allowed")
        }
        while let requirement = pending.first {
            let outcome = await authenticate(
                requirement, prompt: prompt, operation: action.operation, item: fields.identity,
                context: context)
            guard case .proved = outcome else {
                throw KeygateError(
                    outcome.status ?? .authFailed, "rule \(names) needs \(requirement): \(outcome)",
                    cause: outcome.cause)
            }
            let left = try unmet(action, fields, requirements: requirements, freshWithin: freshWithin, context: context)
            guard left.count < pending.count else {
                throw KeygateError(.authFailed, "rule \(names) needs \(requirement): the proof did not count")
            }
            pending = left
        }
        return true
    }

    /// The groups of `groups` the organisation's grants let this caller use. A refused group
    /// that was named, or the default group, is `errSecMissingEntitlement` (audited, naming
    /// the grants); other refused groups are left out, so their items are invisible.
    func entitledGroups(_ groups: [String], named: Bool) throws(KeygateError) -> [String] {
        // The groups allowed while one is left out; nil while every group so far is allowed, and
        // then `groups` itself is the answer (no new array per call).
        var allowed: [String]?
        for (position, group) in groups.enumerated() {
            let refusal = organisationPolicy.reviewAccessGroup(group)
            guard !refusal.isAllowed else {
                allowed?.append(group)
                continue
            }
            guard named || position == 0 else {
                if allowed == nil { allowed = Array(groups[..<position]) }
                continue
            }
            try auditor.record(
                AuditEvent(
                    kind: .entitlement, item: ItemIdentity(accessGroup: group, account: "", service: ""),
                    ruleIDs: refusal.ruleIDs, decision: .deny, status: .missingEntitlement,
                    notes: [.organisationGrant(refusal.explanation)]))
            throw KeygateError(
                .missingEntitlement, "the caller may not use access group '\(group)': \(refusal.explanation)")
        }
        return allowed ?? groups
    }
}
