public import KeygatePolicy
public import KeygateStore

/// Applies organisation rules (`.policy` files, see `Policies/README.md`) in the facade.
///
/// The calling program is fixed when it is made: in embedded mode the current executable,
/// in broker mode the peer's. Each review reads the set in force in `store`, so a reload
/// takes effect for the next operation and never half-way through one.
///
/// ```swift
/// let policies = PolicyStore(try PolicySet(files: [("bank.policy", text)]))
/// let keychain = Keychain(store: items, accessGroups: ["bank"], authenticator: pam,
///                         organisationPolicy: RulesOrganisationPolicy(store: policies, program: "/usr/bin/bank"))
/// ```
public struct RulesOrganisationPolicy: OrganisationPolicy {
    /// The rules in force.
    public let store: PolicyStore
    /// The calling program's executable path (nil: unknown, matched only by `*`).
    public let program: String?

    /// A policy over `store` for calls made by `program`.
    public init(store: PolicyStore, program: String?) {
        self.store = store
        self.program = program
    }

    /// A policy over a fixed set.
    public init(_ policies: PolicySet, program: String?) {
        self.init(store: PolicyStore(policies), program: program)
    }

    /// The request the rules see for `action` on `fields`.
    public func request(_ action: PolicyAction, item fields: ItemFields) -> PolicyRequest {
        PolicyRequest(
            action: action, service: fields.identity.service, account: fields.identity.account,
            accessGroup: fields.identity.accessGroup, label: fields.label, program: program,
            accessControl: fields.accessControl)
    }

    /// The combined decision of every matching rule (see ``KeygatePolicy/PolicyDecision``).
    public func review(_ action: PolicyAction, item fields: ItemFields) -> PolicyDecision {
        store.policies.decide(request(action, item: fields))
    }

    /// Refuses an access group some grant names when no grant of it names this program.
    public func reviewAccessGroup(_ accessGroup: String) -> EntitlementDecision {
        store.policies.entitlement(program: program, accessGroup: accessGroup)
    }
}
