/// A policy test file: policies and the decisions they must give, like `opa test`, so an
/// organisation can check its rules in CI (`keygate policy test FILE`, or from Swift Testing
/// through `KeygateTesting`).
///
/// ```json
/// {"policies": ["payment-tokens.policy"],
///  "cases": [{"name": "weak token refused", "operation": "add", "service": "com.example.pay.card",
///             "accessControl": "biometryAny", "accessible": "whenUnlocked",
///             "expect": {"decision": "deny", "rules": ["payment-tokens"]}}]}
/// ```
/// `policies` are paths relative to the test file (files or directories).
public struct PolicyTestFile: Codable, Hashable, Sendable {
    /// The policy files or directories, relative to the test file.
    public var policies: [String]
    /// The situations and expected decisions.
    public var cases: [PolicyCase]

    /// A test file.
    public init(policies: [String], cases: [PolicyCase]) {
        self.policies = policies
        self.cases = cases
    }
}

/// One situation and the decision the policies must give for it.
public struct PolicyCase: Codable, Hashable, Sendable, CustomStringConvertible {
    /// What must come out.
    public struct Expectation: Codable, Hashable, Sendable {
        /// `allow` or `deny`.
        public var decision: String
        /// The deciding rule ids, in order (grant ids for `use`).
        public var rules: [String]
        /// The status name of a denial (`errSecDeniedByPolicy`-like, `errSecMissingEntitlement`), if checked.
        public var status: String?
        /// The freshness bound in seconds, if checked (`0`… `300`; absent: not checked).
        public var freshWithin: Int?
        /// The extra factor requirements, as text (`passcode`, `biometry | passcode`), if checked.
        public var requirements: [String]?

        /// An expectation.
        public init(
            decision: String, rules: [String], status: String? = nil, freshWithin: Int? = nil,
            requirements: [String]? = nil
        ) {
            self.decision = decision
            self.rules = rules
            self.status = status
            self.freshWithin = freshWithin
            self.requirements = requirements
        }
    }

    /// The case's name.
    public var name: String
    /// An operation (`add`, `read`, … `list`), or `use` to ask whether the program may use the access group.
    public var operation: String
    /// The item's service.
    public var service: String?
    /// The item's account.
    public var account: String?
    /// The item's access group.
    public var accessGroup: String?
    /// The item's label.
    public var label: String?
    /// The calling program.
    public var program: String?
    /// The item's flags (`biometryAny,devicePasscode,or` or space-separated).
    public var accessControl: String?
    /// The item's protection class.
    public var accessible: String?
    /// What must come out.
    public var expect: Expectation

    /// A case.
    public init(
        name: String, operation: String, service: String? = nil, account: String? = nil, accessGroup: String? = nil,
        label: String? = nil, program: String? = nil, accessControl: String? = nil, accessible: String? = nil,
        expect: Expectation
    ) {
        self.name = name
        self.operation = operation
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
        self.label = label
        self.program = program
        self.accessControl = accessControl
        self.accessible = accessible
        self.expect = expect
    }

    /// The case's name.
    public var description: String { name }

    /// What `policies` decide for this case, as an expectation (the same fields as ``expect``).
    /// - Throws: ``KeygateError`` (`errSecParam`) for an unknown operation, flag or class.
    public func actual(in policies: PolicySet) throws(KeygateError) -> Expectation {
        if operation == "use" {
            let decision = policies.entitlement(program: program, accessGroup: accessGroup ?? "")
            return Expectation(
                decision: decision.isAllowed ? "allow" : "deny", rules: decision.ruleIDs,
                status: decision.isAllowed ? nil : KeygateStatus.missingEntitlement.name ?? "errSecMissingEntitlement")
        }
        guard let action = PolicyAction(rawValue: operation) else {
            throw KeygateError(.param, "case '\(name)': unknown operation '\(operation)'")
        }
        var control: AccessControl?
        if accessControl != nil || accessible != nil {
            // No access control given: a class alone, no flags (an empty list is refused).
            let flags =
                try accessControl.map { (text: String) throws(KeygateError) in
                    try AccessControlFlags(parsing: text.split(separator: " ").joined(separator: ","))
                } ?? []
            control = try AccessControl(
                protection: try accessible.map { (text: String) throws(KeygateError) in
                    try ProtectionClass(parsing: text)
                }
                    ?? .default, flags: flags)
        }
        let decision = policies.decide(
            PolicyRequest(
                action: action, service: service ?? "", account: account ?? "", accessGroup: accessGroup ?? "",
                label: label, program: program, accessControl: control))
        let status: String? =
            switch decision.outcome {
            case .allow: nil
            case .deny(let status): status.name ?? "\(status.rawValue)"
            }
        return Expectation(
            decision: decision.isDenied ? "deny" : "allow", rules: decision.decidingRules, status: status,
            freshWithin: decision.freshWithin, requirements: decision.requirements.map { "\($0.requirement)" })
    }

    /// Runs the case: nil when the decision is as expected, else a message saying what was
    /// expected and what came out, with the deciding rules.
    public func check(in policies: PolicySet) -> String? {
        let actual: Expectation
        do {
            actual = try self.actual(in: policies)
        } catch {
            return "\(name): \(error.message)"
        }
        var problems: [String] = []
        if actual.decision != expect.decision {
            problems.append("decision \(actual.decision), expected \(expect.decision)")
        }
        if actual.rules != expect.rules {
            problems.append("deciding rules \(actual.rules), expected \(expect.rules)")
        }
        if let status = expect.status, actual.status != status {
            problems.append("status \(actual.status ?? "none"), expected \(status)")
        }
        if let fresh = expect.freshWithin, actual.freshWithin != fresh {
            problems.append("freshness bound \(actual.freshWithin.map { "\($0)s" } ?? "none"), expected \(fresh)s")
        }
        if let requirements = expect.requirements, actual.requirements != requirements {
            problems.append("requirements \(actual.requirements ?? []), expected \(requirements)")
        }
        return problems.isEmpty ? nil : "\(name): " + problems.joined(separator: "; ")
    }
}
