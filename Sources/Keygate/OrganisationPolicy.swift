public import KeygatePolicy
public import KeygateStore

/// The one place where organisation rules add requirements to an operation, on top of the
/// item's own access control (policy files arrive in a later issue).
///
/// Duties: decide from the operation and the item's fields only; never see a value; when a
/// rule cannot be evaluated, deny (fail closed).
public protocol OrganisationPolicy: Sendable {
    /// The verdict for `operation` on the item with `fields`.
    func review(_ operation: Operation, item fields: ItemFields) -> OrganisationVerdict
}

/// What an organisation policy says about one operation.
public enum OrganisationVerdict: Hashable, Sendable {
    /// No rule objects.
    case proceed
    /// The caller must also prove one of these alternatives (for example `passcode` before a delete).
    case require(Requirement, rule: String)
    /// A rule forbids it; the error names the rule.
    case deny(rule: String, reason: String)
}

/// The policy that never objects.
public struct NoOrganisationPolicy: OrganisationPolicy {
    /// Creates it.
    public init() {}
    /// Always ``OrganisationVerdict/proceed``.
    public func review(_ operation: Operation, item fields: ItemFields) -> OrganisationVerdict { .proceed }
}
