public import KeygatePolicy
public import KeygateStore

/// The one place where organisation rules add requirements to an operation, on top of the
/// item's own access control (``RulesOrganisationPolicy`` applies `.policy` files).
///
/// Duties: decide from the operation and the item's fields only; never see a value; when a
/// rule cannot be evaluated, deny (fail closed). The facade asks once per item and operation
/// and acts on that one decision throughout.
public protocol OrganisationPolicy: Sendable {
    /// The decision for `action` on the item with `fields` (for add and update, `fields` hold
    /// the access control the item will have): denied naming the rules, or allowed with the
    /// requirements and freshness bound the rules add (``KeygatePolicy/PolicyDecision/addsNothing``
    /// when none applies).
    func review(_ action: PolicyAction, item fields: ItemFields) -> PolicyDecision
    /// Whether the caller may use `accessGroup` at all, naming the grants that decided (a
    /// refusal is `errSecMissingEntitlement`). The default allows every group.
    func reviewAccessGroup(_ accessGroup: String) -> EntitlementDecision
}

extension OrganisationPolicy {
    /// Allows every group: no grant names any.
    public func reviewAccessGroup(_ accessGroup: String) -> EntitlementDecision { .ungranted(accessGroup) }
}

/// The policy that never objects.
public struct NoOrganisationPolicy: OrganisationPolicy {
    /// Creates it.
    public init() {}
    /// Always a decision that adds nothing.
    public func review(_ action: PolicyAction, item fields: ItemFields) -> PolicyDecision { PolicyDecision() }
}
