public import KeygatePolicy
import KeygateStore

extension Keychain {
    // MARK: - add

    /// Adds a generic-password item, like `SecItemAdd`.
    ///
    /// The class check and the bind step run first (a locked device is
    /// `errSecInteractionNotAllowed` even when the item exists, as Apple's is); then the
    /// primary key must be free (`errSecDuplicateItem`).
    /// - Throws: ``KeygateError``: `errSecParam` for a protection class with an access control,
    ///   an access control on a synchronizable item, a synchronizable `ThisDeviceOnly` item, or
    ///   `skip`; `errSecNoSuchAttr` for unknown attributes; `errSecMissingEntitlement` for
    ///   another group; the evaluator's status for a refused add.
    public func add(_ request: AddRequest, context given: AuthenticationContext? = nil) async throws(KeygateError) {
        try Self.refuseOtherAttributes(request.otherAttributes)
        if request.authenticationUI == .skip {
            throw KeygateError(.param, "skip is valid only for copyMatching")
        }
        if request.protection != nil && request.accessControl != nil {
            throw KeygateError(.param, "give a protection class or an access control, not both")
        }
        if request.synchronizable && request.accessControl != nil {
            throw KeygateError(.param, "a synchronizable item cannot have an access control")
        }
        let group = try groups(request.accessGroup)[0]
        let control: AccessControl
        if let given = request.accessControl {
            control = given
        } else {
            control = try AccessControl(protection: request.protection ?? .default)
        }
        if request.synchronizable && control.protection.isThisDeviceOnly {
            throw KeygateError(.param, "a synchronizable item cannot be \(control.protection.name)")
        }
        let context = context(given)
        let identity = ItemIdentity(
            accessGroup: group, account: request.account, service: request.service,
            synchronizable: request.synchronizable)
        let interaction = Self.interaction(request.authenticationUI, context)
        guard
            case .allowed(let decision) = try await gate(
                control, .add, item: identity, context: context, interaction: interaction,
                prompt: "Add \(identity.service)")
        else { throw KeygateError(.internalError, "add was neither allowed nor refused") }
        let bound = decision.bindingEnrollment.map { control.bound(to: $0) } ?? control
        let now = clock.now()
        let fields = ItemFields(
            identity: identity, label: request.label, generic: request.generic, accessControl: bound, created: now,
            modified: now)
        try await review(.add, fields, context: context, interaction: interaction, prompt: "Add \(identity.service)")
        do throws(KeygateError) {
            try store.insert([NewItem(fields: fields, data: request.data)])
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
    /// the store and not returned.
    /// - Returns: the matched items, at most the match limit (default one).
    /// - Throws: `errSecItemNotFound` when nothing is left to return.
    public func copyMatching(_ query: ItemQuery, context given: AuthenticationContext? = nil) async throws(KeygateError)
        -> [MatchedItem]
    {
        try Self.refuseOtherAttributes(query.otherAttributes)
        let limit: Int
        switch query.matchLimit ?? .one {
        case .one: limit = 1
        case .all: limit = .max
        case .count(let count):
            guard count >= 1 else { throw KeygateError(.param, "a match limit must be at least 1") }
            limit = count
        }
        let context = context(given)
        let interaction = Self.interaction(query.authenticationUI, context)
        var results: [MatchedItem] = []
        for record in try candidates(query, context: context) where results.count < limit {
            guard query.returnData else {
                results.append(
                    MatchedItem(attributes: query.returnAttributes ? ItemAttributes(record.fields) : nil, data: nil))
                continue
            }
            switch try await gate(
                record.fields.accessControl, .read, item: record.fields.identity, context: context,
                interaction: interaction,
                prompt: query.operationPrompt ?? "Read \(record.fields.identity.service)")
            {
            case .skipped:
                continue
            case .invalidated:
                try store.delete([record.id])
                continue
            case .allowed:
                try await review(
                    .read, record.fields, context: context, interaction: interaction,
                    prompt: query.operationPrompt ?? "Read \(record.fields.identity.service)")
                let data: SecretData
                do {
                    data = try store.open(record)
                } catch {
                    auditFailure(.read, record.fields.identity, record.fields.accessControl, error)
                    throw error
                }
                results.append(
                    MatchedItem(attributes: query.returnAttributes ? ItemAttributes(record.fields) : nil, data: data))
            }
        }
        guard !results.isEmpty else { throw KeygateError(.itemNotFound, "no item matches \(Self.describe(query))") }
        return results
    }

    // MARK: - update

    /// Changes every matching item, like `SecItemUpdate`: each must be allowed (updating
    /// decrypts, so the read constraint applies), then all change in one transaction or none do.
    /// - Throws: `errSecParam` for a match limit, return keys or `skip` in the query, or
    ///   conflicting changes; `errSecNoSuchAttr` for unknown attributes; `errSecDuplicateItem`
    ///   when the change makes two items collide; `errSecItemNotFound` when nothing matches.
    public func update(_ query: ItemQuery, changes: ItemChanges, context given: AuthenticationContext? = nil)
        async throws(KeygateError)
    {
        try Self.refuseOtherAttributes(query.otherAttributes)
        try Self.refuseOtherAttributes(changes.otherAttributes)
        if query.matchLimit != nil { throw KeygateError(.param, "a match limit is not allowed in an update") }
        if query.returnData || query.returnAttributes {
            throw KeygateError(.param, "return keys are not allowed in an update query")
        }
        if query.authenticationUI == .skip { throw KeygateError(.param, "skip is valid only for copyMatching") }
        if changes.protection != nil && changes.accessControl != nil {
            throw KeygateError(.param, "change the protection class or the access control, not both")
        }
        if let group = changes.accessGroup { _ = try groups(group) }
        let context = context(given)
        let interaction = Self.interaction(query.authenticationUI, context)
        var replacements: [ItemReplacement] = []
        for record in try candidates(query, context: context) {
            let fields = record.fields
            let prompt = query.operationPrompt ?? "Update \(fields.identity.service)"
            switch try await gate(
                fields.accessControl, .update, item: fields.identity, context: context, interaction: interaction,
                prompt: prompt)
            {
            case .skipped: continue
            case .invalidated:
                try store.delete([record.id])
                continue
            case .allowed: break
            }
            try await review(.update, fields, context: context, interaction: interaction, prompt: prompt)
            var updated = fields
            if let service = changes.service { updated.identity.service = service }
            if let account = changes.account { updated.identity.account = account }
            if let group = changes.accessGroup { updated.identity.accessGroup = group }
            if let sync = changes.synchronizable { updated.identity.synchronizable = sync }
            if let label = changes.label { updated.label = label }
            if let generic = changes.generic { updated.generic = generic }
            if let protection = changes.protection {
                updated.accessControl = fields.accessControl.with(protection: protection)
            }
            if let control = changes.accessControl {
                guard
                    case .allowed(let decision) = try await gate(
                        control, .add, item: updated.identity, context: context, interaction: interaction,
                        prompt: prompt, audited: .update)
                else { throw KeygateError(.internalError, "the new access control was neither allowed nor refused") }
                updated.accessControl = decision.bindingEnrollment.map { control.bound(to: $0) } ?? control
            }
            if updated.identity.synchronizable {
                if updated.accessControl.constraint.kind != .allow || updated.accessControl.requiresApplicationPassword
                    || changes.accessControl != nil
                {
                    throw KeygateError(.param, "a synchronizable item cannot have an access control")
                }
                if updated.accessControl.protection.isThisDeviceOnly {
                    throw KeygateError(
                        .param, "a synchronizable item cannot be \(updated.accessControl.protection.name)")
                }
            }
            updated.modified = clock.now()
            let data: SecretData
            do {
                if let new = changes.data { data = new } else { data = try store.open(record) }
            } catch {
                auditFailure(.update, fields.identity, fields.accessControl, error)
                throw error
            }
            replacements.append(ItemReplacement(id: record.id, fields: updated, data: data))
        }
        guard !replacements.isEmpty else {
            throw KeygateError(.itemNotFound, "no item matches \(Self.describe(query))")
        }
        do throws(KeygateError) {
            try store.replace(replacements)
        } catch {
            for replacement in replacements {
                auditFailure(.update, replacement.fields.identity, replacement.fields.accessControl, error)
            }
            throw error
        }
    }

    // MARK: - delete

    /// Deletes every matching item, like `SecItemDelete`. No authentication is needed
    /// (`odel(true)`), unless an organisation rule asks for it.
    /// - Throws: `errSecParam` for a match limit or `skip`; `errSecItemNotFound` when nothing matches.
    public func delete(_ query: ItemQuery, context given: AuthenticationContext? = nil) async throws(KeygateError) {
        try Self.refuseOtherAttributes(query.otherAttributes)
        if query.matchLimit != nil { throw KeygateError(.param, "a match limit is not allowed in a delete") }
        if query.authenticationUI == .skip { throw KeygateError(.param, "skip is valid only for copyMatching") }
        let context = context(given)
        let interaction = Self.interaction(query.authenticationUI, context)
        let records = try store.items(matching: filter(query))
        guard !records.isEmpty else { throw KeygateError(.itemNotFound, "no item matches \(Self.describe(query))") }
        for record in records {
            _ = try await gate(
                record.fields.accessControl, .delete, item: record.fields.identity, context: context,
                interaction: interaction, prompt: "Delete \(record.fields.identity.service)")
            try await review(
                .delete, record.fields, context: context, interaction: interaction,
                prompt: "Delete \(record.fields.identity.service)")
        }
        try store.delete(records.map(\.id))
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

    /// The matching records that still exist for this context: items invalidated by a removed
    /// passcode or a changed enrollment set are deleted from the store and left out.
    func candidates(_ query: ItemQuery, context: AuthenticationContext) throws(KeygateError) -> [ItemRecord] {
        var state = context.state
        state.interaction = .fail
        let now = context.clock.now()
        var alive: [ItemRecord] = []
        var gone: [ItemID] = []
        for record in try store.items(matching: filter(query)) {
            let decision = evaluator.evaluate(record.fields.accessControl, operation: .read, state: state, now: now)
            if decision.invalidatesItem { gone.append(record.id) } else { alive.append(record) }
        }
        if !gone.isEmpty { try store.delete(gone) }
        return alive
    }

    static func refuseOtherAttributes(_ attributes: [String: String]) throws(KeygateError) {
        if let name = attributes.keys.sorted().first {
            throw KeygateError(.noSuchAttr, "generic-password items have no attribute '\(name)'")
        }
    }

    static func describe(_ query: ItemQuery) -> String {
        var parts: [String] = []
        if let service = query.service { parts.append("service '\(service)'") }
        if let account = query.account { parts.append("account '\(account)'") }
        if let group = query.accessGroup { parts.append("group '\(group)'") }
        return parts.isEmpty ? "the query" : parts.joined(separator: ", ")
    }
}
