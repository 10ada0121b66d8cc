public import KeygatePolicy
import KeygateStore

extension Keychain {
    // MARK: - add

    /// Adds a generic-password item, like `SecItemAdd`.
    ///
    /// The class check and the bind step run first (a locked device is
    /// `errSecInteractionNotAllowed` even when the item exists, as Apple's is); then the
    /// primary key must be free (`errSecDuplicateItem`).
    /// - Throws: ``KeygatePolicy/KeygateError``: `errSecParam` for a protection class with an access control,
    ///   an access control on a synchronizable item, a synchronizable `ThisDeviceOnly` item, or
    ///   `skip`; `errSecNoSuchAttr` for unknown attributes; `errSecMissingEntitlement` for
    ///   another group; the evaluator's status for a refused add.
    ///
    /// The decision's record is written before the item, and with the default durable trail
    /// it is committed in the item's own transaction (one flush for both); a refused or failed
    /// add's record is flushed before the call throws.
    public func add(_ request: AddRequest, context given: AuthenticationContext? = nil) async throws(KeygateError) {
        try await inCall { (keychain) async throws(KeygateError) in
            try await keychain.performAdd(request, context: given)
        }
    }

    func performAdd(_ request: AddRequest, context given: AuthenticationContext?) async throws(KeygateError) {
        let group: String
        let control: AccessControl
        let context: AuthenticationContext
        do throws(KeygateError) {
            try Self.refuseOtherAttributes(request.otherAttributes)
            if request.authenticationUI == .skip {
                throw KeygateError(.param, "skip is valid only for copyMatching")
            }
            group = try groups(request.accessGroup)[0]
            control = try request.protection.accessControlValue()
            var explicitControl = false
            if case .accessControl = request.protection { explicitControl = true }
            try Self.checkSynchronizable(request.synchronizable, control, explicitControl: explicitControl)
            context = try self.context(given)
        } catch {
            throw refused(
                .add, service: request.service, account: request.account, accessGroup: request.accessGroup, error)
        }
        let identity = ItemIdentity(
            accessGroup: group, account: request.account, service: request.service,
            synchronizable: request.synchronizable)
        let interaction = Self.interaction(request.authenticationUI, context)
        let prompt = "Add \(identity.service)"
        // The rules decide once, on the item as it will be (binding it to the enrollment set
        // changes nothing a rule looks at).
        let planned = ItemFields(
            identity: identity, label: request.label, generic: request.generic, accessControl: control,
            created: clock.now(), modified: clock.now())
        let rules = decide(.add, planned)
        let ruleIDs = try refuseEarly(rules, .add, planned)
        guard
            case .allowed(let decision) = try await gate(
                control, .add, item: identity, context: context, interaction: interaction, prompt: prompt,
                ruleIDs: ruleIDs)
        else { throw KeygateError(.internalError, "add was neither allowed nor refused") }
        let bound = decision.bindingEnrollment.map { control.bound(to: $0) } ?? control
        let now = clock.now()
        let fields = ItemFields(
            identity: identity, label: request.label, generic: request.generic, accessControl: bound, created: now,
            modified: now)
        try await review(rules, .add, fields, context: context, interaction: interaction, prompt: prompt)
        try auditor.commit()  // the decision's record first: nothing is added without it
        do {
            try store.insert([NewItem(fields: fields, data: request.data)], joining: auditor.call)
        } catch {
            auditFailure(.add, identity, bound, error)
            throw error
        }
    }

    // MARK: - copyMatching

    /// Finds items, like `SecItemCopyMatching`: attributes never prompt; values are read only
    /// after the evaluator allows it (proving what it asks for, on `context`).
    ///
    /// With `skip`, items that need a prompt are left out. A cancel anywhere fails the whole
    /// call with `errSecUserCanceled`; any other refusal fails it with its status. Items that no
    /// longer exist for this request (passcode removed, enrollment changed) are removed from
    /// the store and not returned; an item whose stored access control was tampered with is
    /// `errSecDecode`.
    /// - Returns: the matched items, at most the match limit (default one).
    /// - Throws: `errSecItemNotFound` when nothing is left to return.
    public func copyMatching(_ query: ItemQuery, context given: AuthenticationContext? = nil) async throws(KeygateError)
        -> [MatchedItem]
    {
        // One record for the call's decisions, written before any value is returned.
        var results: [MatchedItem] = []
        try await inCall { (keychain) async throws(KeygateError) in
            results = try await keychain.performCopyMatching(query, context: given)
        }
        return results
    }

    /// The notes of an attributes-only read's record: one array shared by every item a list names.
    static let attributesOnlyNotes: [AuditNote] = [.attributesOnly]

    func performCopyMatching(_ query: ItemQuery, context given: AuthenticationContext?) async throws(KeygateError)
        -> [MatchedItem]
    {
        let limit: Int
        let filter: ItemFilter
        let context: AuthenticationContext
        do throws(KeygateError) {
            try Self.refuseOtherAttributes(query.otherAttributes)
            switch query.matchLimit ?? .one {
            case .one: limit = 1
            case .all: limit = .max
            case .count(let count):
                guard count >= 1 else { throw KeygateError(.param, "a match limit must be at least 1") }
                limit = count
            }
            var search = try self.filter(query)
            // Attributes only: the store need not read a single value.
            search.withoutValues = !query.returnData
            filter = search
            context = try self.context(given)
        } catch {
            throw refused(.read, query, error)
        }
        let interaction = Self.interaction(query.authenticationUI, context)
        var results: [MatchedItem] = []
        // Attributes only: no read decision is kept per item (none is used).
        let found = try candidates(filter, context: context, interaction: interaction)
        results.reserveCapacity(min(limit, found.alive.count))
        // Each record read where it is in the array, not copied out.
        for index in found.alive.indices where results.count < limit {
            let fields = found.alive[index].fields
            let attributes = query.returnAttributes ? fields : nil
            guard query.returnData else {
                let rules = decide(.list, fields)
                if !rules.addsNothing {
                    guard
                        try await review(
                            rules, .list, fields, context: context, interaction: interaction,
                            prompt: "List \(fields.identity.service)")
                    else {
                        continue
                    }
                }
                try auditor.record(
                    AuditEvent(
                        kind: .read, item: fields.identity,
                        accessControl: fields.accessControl,
                        decision: .allow, notes: Self.attributesOnlyNotes))
                results.append(MatchedItem(attributes: attributes, data: nil))
                continue
            }
            let sweep = found.sweeps[index]
            if case .damaged(let damage) = sweep { throw refuseDamaged(found.alive[index], damage, .read) }
            // Made only when someone is asked (a plain read asks no one).
            func prompt() -> String { query.operationPrompt ?? "Read \(fields.identity.service)" }
            // The rules decide once for this item: the refusal before the gate and the review after it.
            let rules = decide(.read, fields)
            let ruleIDs = try refuseEarly(rules, .read, fields)
            // The search's decision is the gate's first round while the context is as it was
            // decided on (one evaluation per item, not two): an allow is recorded with no await.
            let decided = found.reusable(sweep, in: context)
            if let decided, decided.isAllowed {
                try gateAllowed(
                    decided, fields.accessControl, .read, item: fields.identity, context: context, ruleIDs: ruleIDs)
            } else {
                switch try await gate(
                    fields.accessControl, .read, item: fields.identity, context: context, interaction: interaction,
                    prompt: prompt(), ruleIDs: ruleIDs, first: decided)
                {
                case .skipped, .invalidated: continue
                case .allowed: break
                }
            }
            // No rule objects (the usual case): nothing to review, nothing to await.
            if !rules.addsNothing {
                guard
                    try await review(
                        rules, .read, fields, context: context, interaction: interaction, prompt: prompt())
                else {
                    continue
                }
            }
            let data: SecretData
            do {
                data = try store.open(found.alive[index])
            } catch {
                auditFailure(.read, fields.identity, fields.accessControl, error)
                throw error
            }
            results.append(MatchedItem(attributes: attributes, data: data))
        }
        guard !results.isEmpty else { throw KeygateError(.itemNotFound, "no item matches \(Self.describe(query))") }
        return results
    }

    // MARK: - update

    /// Changes every matching item, like `SecItemUpdate`: each must be allowed (updating
    /// decrypts, so the read constraint applies), then all change in one transaction or none do.
    ///
    /// A new protection class or access control is checked as an add would check it (class
    /// available, passcode set, biometry bound again). Parameter errors are found before anyone
    /// is asked for a proof. The organisation's rules review each item as it is and, when the
    /// change moves it (a new service, account or group), also as updated and as added at its
    /// new identity.
    /// - Throws: `errSecParam` for a match limit, return keys or `skip` in the query, or
    ///   conflicting changes; `errSecNoSuchAttr` for unknown attributes; `errSecDuplicateItem`
    ///   when the change makes two items collide; `errSecItemNotFound` when nothing matches;
    ///   `errSecNotAvailable` when another process changed an item meanwhile (nothing changes).
    public func update(_ query: ItemQuery, changes: ItemChanges, context given: AuthenticationContext? = nil)
        async throws(KeygateError)
    {
        try await inCall { (keychain) async throws(KeygateError) in
            try await keychain.performUpdate(query, changes: changes, context: given)
        }
    }

    func performUpdate(_ query: ItemQuery, changes: ItemChanges, context given: AuthenticationContext?)
        async throws(KeygateError)
    {
        let filter: ItemFilter
        let context: AuthenticationContext
        do throws(KeygateError) {
            try Self.refuseOtherAttributes(query.otherAttributes)
            try Self.refuseOtherAttributes(changes.otherAttributes)
            if query.matchLimit != nil { throw KeygateError(.param, "a match limit is not allowed in an update") }
            if query.returnData || query.returnAttributes {
                throw KeygateError(.param, "return keys are not allowed in an update query")
            }
            if query.authenticationUI == .skip { throw KeygateError(.param, "skip is valid only for copyMatching") }
            if let group = changes.accessGroup { _ = try groups(group) }
            filter = try self.filter(query)
            context = try self.context(given)
        } catch {
            throw refused(.update, query, error)
        }
        let interaction = Self.interaction(query.authenticationUI, context)

        // First the new fields of every item, with every parameter check: no prompt before them.
        var planned: [(record: ItemRecord, fields: ItemFields, newControl: AccessControl?)] = []
        let found = try candidates(filter, context: context)
        for (record, sweep) in zip(found.alive, found.sweeps) {
            if case .damaged(let damage) = sweep { throw refuseDamaged(record, damage, .update) }
            // The stored access control is trusted only once the sealed value authenticates it
            // (its associated data binds the identity and the access control): an edited row
            // is errSecDecode here, before any decision, and nothing is written.
            do {
                try store.verify(record)
            } catch {
                auditFailure(.update, record.fields.identity, nil, error)
                throw error
            }
            var updated = record.fields
            if let service = changes.service { updated.identity.service = service }
            if let account = changes.account { updated.identity.account = account }
            if let group = changes.accessGroup { updated.identity.accessGroup = group }
            if let sync = changes.synchronizable { updated.identity.synchronizable = sync }
            if let label = changes.label { updated.label = label }
            if let generic = changes.generic { updated.generic = generic }
            var newControl: AccessControl?
            var explicitControl = false
            switch changes.protection {
            case .accessible(let protection)?: newControl = record.fields.accessControl.with(protection: protection)
            case .accessControl(let control)?:
                newControl = control
                explicitControl = true
            case nil: break
            }
            let control = newControl ?? updated.accessControl
            do throws(KeygateError) {
                try Self.checkSynchronizable(
                    updated.identity.synchronizable, control,
                    explicitControl: explicitControl || control.imposesAuthentication)
            } catch {
                let identity = record.fields.identity
                throw refused(
                    .update, service: identity.service, account: identity.account, accessGroup: identity.accessGroup,
                    error)
            }
            planned.append((record, updated, newControl))
        }
        guard !planned.isEmpty else { throw KeygateError(.itemNotFound, "no item matches \(Self.describe(query))") }

        var replacements: [ItemReplacement] = []
        for (record, planned, newControl) in planned {
            var updated = planned
            let prompt = query.operationPrompt ?? "Update \(record.fields.identity.service)"
            var reviewed = record.fields  // rules see the access control the item will have
            if let newControl { reviewed.accessControl = newControl }
            // An item that moves (a new service, account or group) is also, to the rules, the
            // item it becomes there: reviewed as updated and as added at its new identity, so a
            // rename can neither leave a rule of the new place behind nor add where adds are
            // forbidden.
            var target = updated
            target.accessControl = reviewed.accessControl
            let moved = target.identity != record.fields.identity
            // Each review decided once: before the gate (a refusal) and after it (the conditions).
            let rules = decide(.update, reviewed)
            let moves = moved ? [(PolicyAction.update, decide(.update, target)), (.add, decide(.add, target))] : []
            var ruleIDs = try refuseEarly(rules, .update, reviewed)
            for (action, decision) in moves {
                ruleIDs += try refuseEarly(decision, action, target).filter { !ruleIDs.contains($0) }
            }
            switch try await gate(
                record.fields.accessControl, .update, item: record.fields.identity, context: context,
                interaction: interaction, prompt: prompt, ruleIDs: ruleIDs)
            {
            case .skipped, .invalidated: continue
            case .allowed: break
            }
            try await review(rules, .update, reviewed, context: context, interaction: interaction, prompt: prompt)
            for (action, decision) in moves {
                try await review(decision, action, target, context: context, interaction: interaction, prompt: prompt)
            }
            if let control = newControl {
                // A new class or access control must be one an add would accept now.
                guard
                    case .allowed(let decision) = try await gate(
                        control, .add, item: updated.identity, context: context, interaction: interaction,
                        prompt: prompt, audited: .update)
                else { throw KeygateError(.internalError, "the new access control was neither allowed nor refused") }
                updated.accessControl = decision.bindingEnrollment.map { control.bound(to: $0) } ?? control
            }
            updated.modified = clock.now()
            let data: SecretData
            do {
                if let new = changes.data { data = new } else { data = try store.open(record) }
            } catch {
                auditFailure(.update, record.fields.identity, record.fields.accessControl, error)
                throw error
            }
            replacements.append(ItemReplacement(replacing: record, fields: updated, data: data))
        }
        guard !replacements.isEmpty else {
            throw KeygateError(.itemNotFound, "no item matches \(Self.describe(query))")
        }
        try auditor.commit()  // the decisions' record first: nothing changes without it
        do {
            try store.replace(replacements, joining: auditor.call)
        } catch {
            for replacement in replacements {
                auditFailure(.update, replacement.fields.identity, replacement.fields.accessControl, error)
            }
            throw error
        }
    }

    // MARK: - delete

    /// Deletes every matching item, like `SecItemDelete`. No authentication is needed
    /// (`odel(true)`), unless an organisation rule asks for it. Items that no longer exist for
    /// this request (passcode removed, enrollment changed) are removed by the search itself and
    /// count as deleted: deleting only such items succeeds.
    /// - Throws: `errSecParam` for a match limit or `skip`; `errSecItemNotFound` when nothing matches;
    ///   `errSecNotAvailable` when another process changed an item meanwhile (nothing is deleted).
    public func delete(_ query: ItemQuery, context given: AuthenticationContext? = nil) async throws(KeygateError) {
        try await inCall { (keychain) async throws(KeygateError) in
            try await keychain.performDelete(query, context: given)
        }
    }

    func performDelete(_ query: ItemQuery, context given: AuthenticationContext?) async throws(KeygateError) {
        let filter: ItemFilter
        let context: AuthenticationContext
        do throws(KeygateError) {
            try Self.refuseOtherAttributes(query.otherAttributes)
            if query.matchLimit != nil { throw KeygateError(.param, "a match limit is not allowed in a delete") }
            if query.authenticationUI == .skip { throw KeygateError(.param, "skip is valid only for copyMatching") }
            filter = try self.filter(query)
            context = try self.context(given)
        } catch {
            throw refused(.delete, query, error)
        }
        let interaction = Self.interaction(query.authenticationUI, context)
        let found = try candidates(filter, context: context)
        guard !found.alive.isEmpty || found.removed > 0 else {
            throw KeygateError(.itemNotFound, "no item matches \(Self.describe(query))")
        }
        for record in found.alive {
            let prompt = query.operationPrompt ?? "Delete \(record.fields.identity.service)"
            _ = try await gate(
                record.fields.accessControl, .delete, item: record.fields.identity, context: context,
                interaction: interaction, prompt: prompt)
            try await review(
                decide(.delete, record.fields), .delete, record.fields, context: context, interaction: interaction,
                prompt: prompt)
        }
        guard !found.alive.isEmpty else { return }
        try auditor.commit()  // the decisions' record first: nothing is deleted without it
        // Only as read: an item changed meanwhile deletes nothing.
        try store.delete(found.alive, joining: auditor.call)
    }

    // MARK: - Helpers

    /// The store filter for a query.
    func filter(_ query: ItemQuery) throws(KeygateError) -> ItemFilter {
        let sync: Bool? =
            switch query.synchronizable {
            case .no: false
            case .yes: true
            case .any: nil
            }
        return ItemFilter(
            accessGroups: try groups(query.accessGroup), service: query.service, account: query.account,
            label: query.label, generic: query.generic, synchronizable: sync, protection: query.protection)
    }

    /// Audits a refused query: see ``refused(_:service:account:accessGroup:_:)``.
    func refused(_ kind: AuditEvent.Kind, _ query: ItemQuery, _ error: KeygateError) -> KeygateError {
        refused(kind, service: query.service, account: query.account, accessGroup: query.accessGroup, error)
    }

    /// The records a search found: those that still exist for this context, and how many were
    /// invalidated and removed by the search.
    struct Candidates {
        /// The records to work on.
        var alive: [ItemRecord] = []
        /// What the search found about each record, in order: its read decision, or the damage
        /// that keeps it from being decided (checked here once per call; nothing checks again).
        /// Empty when the search kept no decisions (``Keychain/candidates(_:context:interaction:)``).
        var sweeps: [Sweep] = []
        /// The generation of the context's state those decisions were made on (with the call's
        /// interaction): ``KeygatePolicy/AuthenticationContext/stateAndGeneration``.
        var generation: UInt64?
        /// How many matching records no longer existed and were removed.
        var removed = 0

        /// What the search found about one record.
        enum Sweep {
            /// Its read decision on ``state``.
            case decided(Decision)
            /// Its stored access control cannot be trusted (``KeygateStore/ItemRecord/damage``): never decided.
            case damaged(String)
        }

        /// The sweep's decision when it can stand for a read's first evaluation now: made on the
        /// state the context still holds (no proof, device change or prompt since: the state's
        /// generation has not moved, so nothing is copied or compared), with the call's
        /// interaction. The gate continues from it (``Keychain/gate(_:_:item:context:interaction:prompt:audited:ruleIDs:first:)``).
        func reusable(_ sweep: Sweep, in context: AuthenticationContext) -> Decision? {
            guard case .decided(let decision) = sweep, let generation else { return nil }
            return context.isUnchanged(since: generation) ? decision : nil
        }
    }

    /// The matching records that still exist for this context. Items invalidated by a removed
    /// passcode or a changed enrollment set are removed from the store (audited first, as a
    /// delete naming the item's bound enrollment hash and the current one: when the record
    /// cannot be written nothing is removed) and left out.
    ///
    /// Each record's read decision is made with `interaction` (a read's, so its gate can
    /// continue from it; `fail` for a call that only looks for invalidated items). For a search
    /// for attributes only (`filter.withoutValues`, which never uses them) every record is still
    /// decided, to find the invalidated ones, but no decision or damage is kept: the sweeps are empty.
    func candidates(_ filter: ItemFilter, context: AuthenticationContext, interaction: InteractionPolicy = .fail)
        throws(KeygateError) -> Candidates
    {
        let decisions = !filter.withoutValues
        let records = try store.items(matching: filter)
        readBiometry(for: records.lazy.map(\.fields.accessControl), context: context)
        var state: AuthenticationState
        let generation: UInt64
        (state, generation) = context.stateAndGeneration
        state.interaction = interaction
        // The keychain's own clock: `context` is bound to it (``context(_:)``), and reading it
        // here takes no lock and copies no existential out of the context.
        let now = clock.now()
        var found = Candidates(generation: generation)
        if decisions { found.sweeps.reserveCapacity(records.count) }
        // Where the removed records were, in order: the records found are the candidates as
        // they are (no copy of a list's hundreds of thousands) unless some were removed.
        var goneIndices: [Int] = []
        var gone: [ItemRecord] = []  // the removed records as read whole (what the delete checks)
        // Each record read where it is in the array (a record copied out per candidate cost a
        // retain and a release of each of its fields); only a removed one is copied.
        for index in records.indices {
            if let damage = records[index].damage {
                if decisions { found.sweeps.append(.damaged(damage)) }
                continue
            }
            let control = records[index].fields.accessControl
            let decision = evaluator.evaluate(control, operation: .read, state: state, now: now)
            guard case .invalidated(let why) = decision.denial else {
                if decisions { found.sweeps.append(.decided(decision)) }
                continue
            }
            // Removed only on access-control columns the sealed value vouches for: an edited
            // class or binding that merely reads as invalidated is damage (errSecDecode), and
            // the item stays. A search for attributes only read no value: the row is read again
            // whole (rare: only an item that reads as invalidated).
            let record: ItemRecord
            do {
                guard let sealed = try filter.withoutValues ? reread(records[index]) : records[index] else { continue }
                try store.verify(sealed)
                record = sealed
            } catch {
                if decisions { found.sweeps.append(.damaged(error.message)) }
                continue
            }
            var notes: [AuditNote] = []
            if why == .enrollmentChanged {
                notes.append(.enrollment(bound: control.boundEnrollment, now: state.biometry.enrollment))
            }
            notes.append(.invalidated)
            try auditor.record(
                AuditEvent(
                    kind: .delete, item: record.fields.identity, accessControl: control,
                    decision: .allow, reasons: Array(decision.reasons), notes: notes))
            goneIndices.append(index)
            gone.append(record)
        }
        if goneIndices.isEmpty {
            found.alive = records
        } else {
            found.alive.reserveCapacity(records.count - goneIndices.count)
            var removed = goneIndices.makeIterator()
            var nextRemoved = removed.next()
            for (index, record) in records.enumerated() {
                if index == nextRemoved {
                    nextRemoved = removed.next()
                    continue
                }
                found.alive.append(record)
            }
        }
        if !goneIndices.isEmpty {
            try auditor.commit()  // the removals' records first: when they cannot be written nothing is removed
            try store.delete(gone, joining: auditor.call)
        }
        found.removed = goneIndices.count
        return found
    }

    /// `record` read again with its sealed value (a search for attributes only reads none), or
    /// nil when it is gone meanwhile.
    private func reread(_ record: ItemRecord) throws(KeygateError) -> ItemRecord? {
        let identity = record.fields.identity
        let filter = ItemFilter(
            accessGroups: [identity.accessGroup], service: identity.service, account: identity.account,
            synchronizable: identity.synchronizable)
        return try store.items(matching: filter).first { $0.id == record.id }
    }

    /// Apple's synchronizable rules: no access control on a synchronizable item (`errSecParam`),
    /// and (Keygate's strict choice, spec §2) no `ThisDeviceOnly` class either.
    static func checkSynchronizable(_ synchronizable: Bool, _ control: AccessControl, explicitControl: Bool)
        throws(KeygateError)
    {
        guard synchronizable else { return }
        if explicitControl {
            throw KeygateError(.param, "a synchronizable item cannot have an access control")
        }
        if control.protection.isThisDeviceOnly {
            throw KeygateError(.param, "a synchronizable item cannot be \(control.protection.name)")
        }
    }

    static func refuseOtherAttributes(_ attributes: [String: String]) throws(KeygateError) {
        // The usual query names none: no keys sorted for nothing.
        guard !attributes.isEmpty else { return }
        if let name = attributes.keys.sorted().first {
            throw KeygateError(.noSuchAttr, "generic-password items have no attribute '\(name)'")
        }
    }

    /// The query's service, account and group, as a not-found message names them. Built by
    /// appending, not `joined(separator:)`, whose element type is looked up at run time by a
    /// scan of the executable's conformance records: a short process pays for that scan (the
    /// bench's "Whole process" rows).
    static func describe(_ query: ItemQuery) -> String {
        var text = ""
        func add(_ part: String) {
            if !text.isEmpty { text += ", " }
            text += part
        }
        if let service = query.service { add("service '\(service)'") }
        if let account = query.account { add("account '\(account)'") }
        if let group = query.accessGroup { add("group '\(group)'") }
        return text.isEmpty ? "the query" : text
    }
}

extension AccessControl {
    /// Whether the control asks for anything beyond its class (a constraint or an application
    /// password): such a control is an access control however it was given (a backup or a
    /// stored item does not say), so a synchronizable item may not have it.
    var imposesAuthentication: Bool { constraint.kind != .allow || requiresApplicationPassword }
}
