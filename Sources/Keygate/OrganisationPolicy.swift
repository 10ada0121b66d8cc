public import KeygatePolicy
public import KeygateStore

/// The one place where organisation rules add requirements to an operation, on top of the
/// item's own access control (``RulesOrganisationPolicy`` applies `.policy` files).
///
/// Duties: decide from the operation and the item's fields only; never see a value; when a
/// rule cannot be evaluated, deny (fail closed).
public protocol OrganisationPolicy: Sendable {
    /// The verdict for `operation` on the item with `fields`.
    func review(_ operation: Operation, item fields: ItemFields) -> OrganisationVerdict
    /// The verdict for `action` (which includes `export`, `import` and `list`) on the item with
    /// `fields`; for add and update, `fields` hold the access control the item will have. The
    /// default asks ``review(_:item:)-(Operation,_)`` for add, read, update and delete and proceeds otherwise.
    func review(_ action: PolicyAction, item fields: ItemFields) -> OrganisationVerdict
    /// Whether the caller may use `accessGroup` at all: ``OrganisationVerdict/proceed`` or a
    /// refusal (`errSecMissingEntitlement`) naming the grant. The default always proceeds.
    func reviewAccessGroup(_ accessGroup: String) -> OrganisationVerdict
}

extension OrganisationPolicy {
    /// Forwards add, read, update and delete to ``review(_:item:)-(Operation,_)``; proceeds for the others.
    public func review(_ action: PolicyAction, item fields: ItemFields) -> OrganisationVerdict {
        switch action {
        case .add: review(Operation.add, item: fields)
        case .read: review(Operation.read, item: fields)
        case .update: review(Operation.update, item: fields)
        case .delete: review(Operation.delete, item: fields)
        case .export, .import, .list: .proceed
        }
    }

    /// Always ``OrganisationVerdict/proceed``.
    public func reviewAccessGroup(_ accessGroup: String) -> OrganisationVerdict { .proceed }
}

/// What an organisation policy says about one operation.
public enum OrganisationVerdict: Hashable, Sendable {
    /// No rule objects.
    case proceed
    /// The caller must also prove one of these alternatives (for example `passcode` before a delete).
    case require(Requirement, rule: String)
    /// A rule forbids it; the error names the rule.
    case deny(rule: String, reason: String)
    /// Rules refuse it with `status` (``KeygatePolicy/KeygateStatus/deniedByPolicy``, or
    /// `errSecMissingEntitlement` for an access group); the error and the audit record name them.
    case refuse(ruleIDs: [String], status: KeygateStatus, reason: String)
    /// Rules let it proceed under conditions: every requirement met and, when
    /// `freshWithin` is set, only proofs at most that many seconds old counting (for the
    /// item's own access control too, whatever the reuse window).
    case conditions(ruleIDs: [String], requirements: [Requirement], freshWithin: Int?, explanation: String)
}

/// The policy that never objects.
public struct NoOrganisationPolicy: OrganisationPolicy {
    /// Creates it.
    public init() {}
    /// Always ``OrganisationVerdict/proceed``.
    public func review(_ operation: Operation, item fields: ItemFields) -> OrganisationVerdict { .proceed }
}
