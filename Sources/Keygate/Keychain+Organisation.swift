import KeygatePolicy
import KeygateStore

// Applying the organisation policy: per-item verdicts (forbid, minimums, extra factors,
// freshness bounds) and access-group grants. Every verdict that names rules is audited with
// their ids; a refusal names them in its error.
extension Keychain {
    /// Applies the organisation policy to one item; may prove extra requirements, or the
    /// item's own access control again when a freshness bound makes older proofs not count.
    /// - Returns: false when a prompt is needed and the call says `skip` (leave the item out).
    @discardableResult
    func review(
        _ action: PolicyAction, _ fields: ItemFields, context: AuthenticationContext, interaction: InteractionPolicy,
        prompt: @autoclosure () -> String
    ) async throws(KeygateError) -> Bool {
        try await review(
            organisationPolicy.review(action, item: fields), action, fields, context: context, interaction: interaction,
            prompt: prompt())
    }

    /// Applies the organisation policy's `verdict` on one item, as ``review(_:_:context:interaction:prompt:)``
    /// does: a caller that found the verdict to be `proceed` need not call (or await) this at all.
    /// - Returns: false when a prompt is needed and the call says `skip` (leave the item out).
    func review(
        _ verdict: OrganisationVerdict, _ action: PolicyAction, _ fields: ItemFields, context: AuthenticationContext,
        interaction: InteractionPolicy, prompt: @autoclosure () -> String
    ) async throws(KeygateError) -> Bool {
        switch verdict {
        case .proceed:
            return true
        case .deny(let rule, let reason):
            try refuse(action, fields, ruleIDs: [rule], status: .deniedByPolicy, reason: reason)
        case .refuse(let ruleIDs, let status, let reason):
            try refuse(action, fields, ruleIDs: ruleIDs, status: status, reason: reason)
        case .require(let requirement, let rule):
            return try await meet(
                action, fields, ruleIDs: [rule], requirements: [requirement], freshWithin: nil,
                explanation: "needs \(requirement)", context: context, interaction: interaction, prompt: prompt())
        case .conditions(let ruleIDs, let requirements, let freshWithin, let explanation):
            return try await meet(
                action, fields, ruleIDs: ruleIDs, requirements: requirements, freshWithin: freshWithin,
                explanation: explanation, context: context, interaction: interaction, prompt: prompt())
        }
    }

    /// Refuses before anything else is decided or anyone is asked for a proof, when a rule
    /// forbids the operation (any matching forbid wins) or the item is below a minimum.
    /// - Returns: the ids of the rules that add to the item's own access control, so the
    ///   evaluator's records name them too.
    @discardableResult
    func refuseEarly(_ action: PolicyAction, _ fields: ItemFields) throws(KeygateError) -> [String] {
        switch organisationPolicy.review(action, item: fields) {
        case .deny(let rule, let reason):
            try refuse(action, fields, ruleIDs: [rule], status: .deniedByPolicy, reason: reason)
        case .refuse(let ruleIDs, let status, let reason):
            try refuse(action, fields, ruleIDs: ruleIDs, status: status, reason: reason)
        case .proceed:
            return []
        case .require(_, let rule):
            return [rule]
        case .conditions(let ruleIDs, _, _, _):
            return ruleIDs
        }
    }

    /// Audits and throws a refusal naming the rules.
    private func refuse(
        _ action: PolicyAction, _ fields: ItemFields, ruleIDs: [String], status: KeygateStatus, reason: String
    ) throws(KeygateError) -> Never {
        let names = ruleIDs.map { "'\($0)'" }.joined(separator: ", ")
        let error = KeygateError(
            status, "\(action) of \(fields.identity) denied by rule\(ruleIDs.count == 1 ? "" : "s") \(names): \(reason)"
        )
        try auditor.record(
            AuditEvent(
                kind: Self.auditKind(action), item: fields.identity,
                accessControl: fields.accessControl.textForm, ruleIDs: ruleIDs, decision: .deny, status: status,
                notes: [.organisationRule(reason)]))
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
        if freshWithin != nil, action == .read || action == .update || action == .export {
            state.interaction = .allow
            let operation: Operation = action == .update ? .update : .read
            let decision = evaluator.evaluate(fields.accessControl, operation: operation, state: state, now: now)
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
        _ action: PolicyAction, _ fields: ItemFields, ruleIDs: [String], requirements: [Requirement],
        freshWithin: Int?, explanation: String, context: AuthenticationContext, interaction: InteractionPolicy,
        prompt: String
    ) async throws(KeygateError) -> Bool {
        let names = ruleIDs.map { "'\($0)'" }.joined(separator: ", ")
        var pending = try unmet(
            action, fields, requirements: requirements, freshWithin: freshWithin, context: context)
        let now = context.clock.now()
        try auditor.record(
            AuditEvent(
                kind: Self.auditKind(action), item: fields.identity,
                accessControl: fields.accessControl.textForm, ruleIDs: ruleIDs,
                decision: pending.isEmpty ? .allow : .authenticate,
                notes: [.organisationRule(explanation)] + pending.map { .needs($0) },
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
                requirement, prompt: prompt, operation: Operation(rawValue: action.rawValue), item: fields.identity,
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
            let refusal: (ruleIDs: [String], reason: String)?
            switch organisationPolicy.reviewAccessGroup(group) {
            case .refuse(let ruleIDs, _, let reason): refusal = (ruleIDs, reason)
            case .deny(let rule, let reason): refusal = ([rule], reason)
            case .proceed, .require, .conditions: refusal = nil
            }
            guard let refusal else {
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
                    notes: [.organisationGrant(refusal.reason)]))
            throw KeygateError(.missingEntitlement, "the caller may not use access group '\(group)': \(refusal.reason)")
        }
        return allowed ?? groups
    }

    static func auditKind(_ action: PolicyAction) -> AuditEvent.Kind {
        switch action {
        case .add: .add
        case .read, .list: .read
        case .update: .update
        case .delete: .delete
        case .export: .export
        case .import: .import
        }
    }
}
