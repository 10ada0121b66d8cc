// JSON forms of decisions and reasons. A reason on its own encodes as
// `{"code": "factorStale", "factor": "passcode", "secondsAgo": 12, "reuseSeconds": 10}`;
// a decision as an audit record spells its decision fields: `{"decision": "deny", "status": -25308,
// "statusName": "errSecInteractionNotAllowed", "requirement": null, "reasons": ["classUnavailable: …"],
// "bindingEnrollment": "…"}`.

extension DecisionReason: Codable {
    private enum CodingKeys: String, CodingKey {
        case code, operation, protection, why, factor, secondsAgo, reuseSeconds, satisfied, required, possible, policy
    }

    /// Encodes the code and the payload fields.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(code, forKey: .code)
        switch self {
        case .operationNeedsNoAuthentication(let operation): try c.encode(operation, forKey: .operation)
        case .classAvailable(let protection), .deprecatedClass(let protection):
            try c.encode(protection, forKey: .protection)
        case .classUnavailable(let protection, let why):
            try c.encode(protection, forKey: .protection)
            try c.encode(why, forKey: .why)
        case .factorProved(let factor, let seconds):
            try c.encode(factor, forKey: .factor)
            try c.encode(seconds, forKey: .secondsAgo)
        case .factorMissing(let factor): try c.encode(factor, forKey: .factor)
        case .factorStale(let factor, let seconds, let reuse):
            try c.encode(factor, forKey: .factor)
            try c.encode(seconds, forKey: .secondsAgo)
            try c.encode(reuse, forKey: .reuseSeconds)
        case .factorUnavailable(let factor, let why):
            try c.encode(factor, forKey: .factor)
            try c.encode(why, forKey: .why)
        case .thresholdMet(let satisfied, let required):
            try c.encode(satisfied, forKey: .satisfied)
            try c.encode(required, forKey: .required)
        case .thresholdUnreachable(let possible, let required):
            try c.encode(possible, forKey: .possible)
            try c.encode(required, forKey: .required)
        case .interactionNotAllowed(let policy): try c.encode(policy, forKey: .policy)
        case .skipOutsideRead(let operation), .operationNotGranted(let operation):
            try c.encode(operation, forKey: .operation)
        case .noConstraint, .privateKeyUsage, .passcodeRemoved, .enrollmentChanged, .notBound, .boundToEnrollment,
            .proofForOtherEnrollment, .contextInvalidated, .internalFailure:
            break
        }
    }

    /// Decodes a reason from its code and payload fields.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let code = try c.decode(String.self, forKey: .code)
        switch code {
        case "noConstraint": self = .noConstraint
        case "operationNeedsNoAuthentication":
            self = .operationNeedsNoAuthentication(try c.decode(Operation.self, forKey: .operation))
        case "classAvailable": self = .classAvailable(try c.decode(ProtectionClass.self, forKey: .protection))
        case "classUnavailable":
            self = .classUnavailable(
                try c.decode(ProtectionClass.self, forKey: .protection),
                try c.decode(ClassUnavailability.self, forKey: .why))
        case "deprecatedClass": self = .deprecatedClass(try c.decode(ProtectionClass.self, forKey: .protection))
        case "privateKeyUsage": self = .privateKeyUsage
        case "operationNotGranted": self = .operationNotGranted(try c.decode(Operation.self, forKey: .operation))
        case "passcodeRemoved": self = .passcodeRemoved
        case "enrollmentChanged": self = .enrollmentChanged
        case "notBound": self = .notBound
        case "boundToEnrollment": self = .boundToEnrollment
        case "factorProved":
            self = .factorProved(
                try c.decode(Factor.self, forKey: .factor), secondsAgo: try c.decode(Int32.self, forKey: .secondsAgo))
        case "factorMissing": self = .factorMissing(try c.decode(Factor.self, forKey: .factor))
        case "factorStale":
            self = .factorStale(
                try c.decode(Factor.self, forKey: .factor), secondsAgo: try c.decode(Int32.self, forKey: .secondsAgo),
                reuseSeconds: try c.decode(Int32.self, forKey: .reuseSeconds))
        case "proofForOtherEnrollment": self = .proofForOtherEnrollment
        case "factorUnavailable":
            self = .factorUnavailable(
                try c.decode(Factor.self, forKey: .factor), try c.decode(Unavailability.self, forKey: .why))
        case "thresholdMet":
            self = .thresholdMet(
                satisfied: try c.decode(Int8.self, forKey: .satisfied),
                required: try c.decode(Int8.self, forKey: .required))
        case "thresholdUnreachable":
            self = .thresholdUnreachable(
                possible: try c.decode(Int8.self, forKey: .possible),
                required: try c.decode(Int8.self, forKey: .required)
            )
        case "interactionNotAllowed":
            self = .interactionNotAllowed(try c.decode(InteractionPolicy.self, forKey: .policy))
        case "skipOutsideRead": self = .skipOutsideRead(try c.decode(Operation.self, forKey: .operation))
        case "contextInvalidated": self = .contextInvalidated
        case "internalFailure": self = .internalFailure
        default:
            throw DecodingError.dataCorruptedError(forKey: .code, in: c, debugDescription: "unknown reason '\(code)'")
        }
    }
}

extension Decision: Codable {
    private enum CodingKeys: String, CodingKey {
        case decision, status, statusName, requirement, reasons, bindingEnrollment
    }

    /// Encodes the members of `keygate evaluate`'s report (the audit line's decision fields and
    /// the requirement), then the binding enrollment set when there is one.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        for member in reportMembers {
            guard let key = CodingKeys(stringValue: member.key) else { continue }
            switch member.value.value {
            case .string(let text): try c.encode(text, forKey: key)
            case .number(let literal): try c.encode(Int32(literal) ?? 0, forKey: key)
            case .array(let items):
                try c.encode(
                    items.compactMap { if case .string(let text) = $0.value { text } else { nil } }, forKey: key)
            default: try c.encodeNil(forKey: key)
            }
        }
        try c.encodeIfPresent(bindingEnrollment, forKey: .bindingEnrollment)
    }

    /// Decodes a decision from the fields ``encode(to:)`` writes; a reason or requirement text
    /// that no value renders to is refused, naming the field.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try c.decode(String.self, forKey: .decision)
        let outcome: Outcome
        switch kind {
        case "allow": outcome = .allow
        case "deny": outcome = .deny(KeygateStatus(rawValue: try c.decode(Int32.self, forKey: .status)))
        case "authenticate":
            let text = try c.decode(String.self, forKey: .requirement)
            guard let requirement = Requirement(description: text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .requirement, in: c, debugDescription: "unknown requirement '\(text)'")
            }
            outcome = .authenticate(requirement)
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .decision, in: c, debugDescription: "unknown decision '\(kind)'")
        }
        var reasons = DecisionReasons()
        for text in try c.decode([String].self, forKey: .reasons) {
            guard let reason = DecisionReason(description: text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .reasons, in: c, debugDescription: "unknown reason '\(text)'")
            }
            reasons.append(reason)
        }
        // The JSON form keeps no denial of its own: it follows from the reasons as the evaluator set it.
        var denial: Denial?
        if outcome == .deny(.itemNotFound) {
            if reasons.contains(.passcodeRemoved) {
                denial = .invalidated(.passcodeRemoved)
            } else if reasons.contains(.enrollmentChanged) {
                denial = .invalidated(.enrollmentChanged)
            } else if reasons.contains(.interactionNotAllowed(.skip)) {
                denial = .skipped
            }
        }
        self.init(
            outcome, reasons: reasons,
            bindingEnrollment: try c.decodeIfPresent(EnrollmentSetHash.self, forKey: .bindingEnrollment),
            denial: denial)
    }

    /// The one JSON shape of a decision, as `keygate evaluate` prints it and ``encode(to:)``
    /// writes it: `decision`, `status`, `statusName` and `reasons` spelled as in an audit
    /// record's line (reasons as their ``DecisionReason/description``), and the requirement's text.
    package var report: JSONValue { .object(reportMembers) }

    private var reportMembers: [JSONMember] {
        [
            JSONMember("decision", .string(outcome.name)),
            JSONMember("status", status.map { .number(String($0.rawValue)) } ?? .null),
            JSONMember("statusName", status?.name.map { .string($0) } ?? .null),
            JSONMember("requirement", requirement.map { .string($0.description) } ?? .null),
            JSONMember("reasons", .array(reasons.map { JSONNode(.string($0.description)) })),
        ]
    }
}

extension Decision.Outcome {
    /// `allow`, `deny` or `authenticate`: the outcome's name in a decision's JSON form (the
    /// only place it is text).
    package var name: String {
        switch self {
        case .allow: "allow"
        case .deny: "deny"
        case .authenticate: "authenticate"
        }
    }
}
