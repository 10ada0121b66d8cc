/// What a policy is asked about: an operation on an item by a program.
public struct PolicyRequest: Hashable, Sendable {
    /// The operation.
    public var action: PolicyAction
    /// The item's service.
    public var service: String
    /// The item's account.
    public var account: String
    /// The item's access group.
    public var accessGroup: String
    /// The item's label, if it has one (no label matches only `*`).
    public var label: String?
    /// The calling program's executable path; nil when unknown (it then matches only `*`).
    public var program: String?
    /// The item's access control: for add, update and import the one it will have. Needed
    /// for `class` selectors and to check `require at-least`.
    public var accessControl: AccessControl?

    /// A request.
    public init(
        action: PolicyAction, service: String, account: String, accessGroup: String, label: String? = nil,
        program: String? = nil, accessControl: AccessControl? = nil
    ) {
        self.action = action
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
        self.label = label
        self.program = program
        self.accessControl = accessControl
    }

    /// The value a selector field is matched against ("" when absent).
    func value(of field: PolicySelector.Field) -> String? {
        switch field {
        case .service: service
        case .account: account
        case .accessGroup: accessGroup
        case .label: label
        case .program: program
        case .protection: accessControl?.protection.name
        }
    }
}
