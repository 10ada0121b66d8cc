// The JSON form of an access control:
//
//     {"protection": "aku",
//      "flags": ["biometryCurrentSet", "devicePasscode", "or"],
//      "boundEnrollment": "9f2c…",                     (only once bound)
//      "text": "aku;od(pkofn(1) cup(true) cbio(…));oe(true);odel(true)",
//      "constraint": {"kOfN": 1, "of": [{"leaf": "devicePasscode"}, {"leaf": "biometryCurrentSet", …}]}}
//
// `protection`, `flags` and `boundEnrollment` define the value; `text` and `constraint` are
// there for people and tools to inspect. Decoding validates the flags as creation does and,
// when `text` or `constraint` is present, checks that it matches: a hand-edited file cannot
// say one thing and mean another.

extension AccessControl: Codable {
    private enum CodingKeys: String, CodingKey {
        case protection, flags, boundEnrollment, text, constraint
    }

    /// Decodes and validates the JSON form.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let protection = try container.decode(ProtectionClass.self, forKey: .protection)
        let names = try container.decode([String].self, forKey: .flags)
        var flags = AccessControlFlags()
        for name in names {
            guard let flag = AccessControlFlags.flag(named: name) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .flags, in: container, debugDescription: "unknown access-control flag '\(name)'")
            }
            flags.insert(flag)
        }
        var control: AccessControl
        do {
            control = try AccessControl(protection: protection, flags: flags)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: .flags, in: container, debugDescription: error.description)
        }
        if let hash = try container.decodeIfPresent(EnrollmentSetHash.self, forKey: .boundEnrollment) {
            guard control.constraint.leaves.contains(.biometryCurrentSet) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .boundEnrollment, in: container,
                    debugDescription: "only a biometryCurrentSet constraint can be bound to an enrollment set")
            }
            control = control.bound(to: hash)
        }
        if let text = try container.decodeIfPresent(String.self, forKey: .text), text != control.textForm {
            throw DecodingError.dataCorruptedError(
                forKey: .text, in: container,
                debugDescription: "text '\(text)' does not match the flags, which give '\(control.textForm)'")
        }
        if let node = try container.decodeIfPresent(Constraint.Node.self, forKey: .constraint),
            node != control.constraint.node
        {
            throw DecodingError.dataCorruptedError(
                forKey: .constraint, in: container, debugDescription: "constraint does not match the flags")
        }
        self = control
    }

    /// Encodes the JSON form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(protection, forKey: .protection)
        try container.encode(flags.names, forKey: .flags)
        try container.encodeIfPresent(boundEnrollment, forKey: .boundEnrollment)
        try container.encode(textForm, forKey: .text)
        try container.encode(constraint.node, forKey: .constraint)
    }
}

extension Constraint.Node: Codable {
    private enum CodingKeys: String, CodingKey {
        case leaf, boundEnrollment, kOfN, of
    }

    /// Decodes `true`, `false`, a leaf object or a k-of-n object.
    public init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), let value = try? single.decode(Bool.self) {
            self = value ? .allow : .deny
            return
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let k = try container.decodeIfPresent(Int.self, forKey: .kOfN) {
            self = .kOfN(k: k, children: try container.decode([Constraint.Leaf].self, forKey: .of))
        } else {
            self = .leaf(try Constraint.Leaf(from: decoder))
        }
    }

    /// Encodes `true`, `false`, `{"leaf": …}` or `{"kOfN": k, "of": […]}`.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .allow, .deny:
            var single = encoder.singleValueContainer()
            try single.encode(self == .allow)
        case .leaf(let leaf):
            try leaf.encode(to: encoder)
        case .kOfN(let k, let children):
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(k, forKey: .kOfN)
            try container.encode(children, forKey: .of)
        }
    }
}

extension Constraint.Leaf: Codable {
    private enum CodingKeys: String, CodingKey {
        case leaf, boundEnrollment
    }

    /// The leaf's name in the JSON form.
    public var name: String {
        switch self {
        case .devicePolicy: "userPresence"
        case .passcode: "devicePasscode"
        case .biometry(.any): "biometryAny"
        case .biometry(.currentSet): "biometryCurrentSet"
        case .companion: "companion"
        }
    }

    /// Decodes `{"leaf": name, "boundEnrollment": hex?}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let name = try container.decode(String.self, forKey: .leaf)
        switch name {
        case "userPresence": self = .devicePolicy
        case "devicePasscode": self = .passcode
        case "biometryAny": self = .biometry(.any)
        case "biometryCurrentSet":
            self = .biometry(
                .currentSet(try container.decodeIfPresent(EnrollmentSetHash.self, forKey: .boundEnrollment)))
        case "companion": self = .companion
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .leaf, in: container, debugDescription: "unknown leaf '\(name)'")
        }
    }

    /// Encodes `{"leaf": name}`, with `boundEnrollment` for a bound current-set leaf.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .leaf)
        if case .biometry(.currentSet(let hash?)) = self { try container.encode(hash, forKey: .boundEnrollment) }
    }
}
