/// A parsed organisation policy: the rules and grants of one or more `.policy` files, in the
/// order they were written.
///
/// This is the evaluated form and the JSON wire form at once (it is `Codable`), so the same
/// policies can be given as text or as JSON. Build one from text with
/// ``PolicyParser/parse(_:file:)``; check it with ``PolicyValidator``.
public struct PolicyDocument: Codable, Hashable, Sendable {
    /// The named rules, in source order.
    public var rules: [PolicyRule]
    /// The access-group grants, in source order.
    public var grants: [PolicyGrant]

    /// A document with these rules and grants.
    public init(rules: [PolicyRule] = [], grants: [PolicyGrant] = []) {
        self.rules = rules
        self.grants = grants
    }
}

/// Where something was written: file, 1-based line and column.
public struct SourceLocation: Codable, Hashable, Sendable, CustomStringConvertible {
    /// The file's name as given to the parser.
    public var file: String
    /// 1-based line.
    public var line: Int
    /// 1-based column.
    public var column: Int

    /// A location.
    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    /// `file:line:column`, or the file alone when the line is unknown (0, as for JSON).
    public var description: String { line > 0 ? "\(file):\(line):\(column)" : file }
}

/// An operation a rule can name. It extends ``Operation`` with the operations that act on
/// many items at once: `export`, `import` and `list` (attribute-only reads).
public enum PolicyAction: String, CaseIterable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// Adding an item.
    case add
    /// Reading an item's value.
    case read
    /// Changing an item.
    case update
    /// Deleting an item.
    case delete
    /// Putting an item in a backup.
    case export
    /// Restoring an item from a backup.
    case `import`
    /// Listing an item's attributes (never its value).
    case list
    /// Signing with a key.
    case sign
    /// Computing a key (ECDH, ECIES decryption) with a key.
    case computeKey

    /// The keyword.
    public var description: String { rawValue }
}

/// A named rule: selectors (all must match) and clauses (each an effect on some operations).
public struct PolicyRule: Codable, Hashable, Sendable {
    /// The rule's id, unique across a policy set; audit records and explanations name it.
    public var name: String
    /// The selectors; an item matches when every selector matches (no selector: every item).
    public var selectors: [PolicySelector]
    /// The effects, per operation.
    public var clauses: [PolicyClause]
    /// Where the rule starts (nil for rules built in code or given as JSON without it).
    public var location: SourceLocation?

    /// A rule.
    public init(
        name: String, selectors: [PolicySelector] = [], clauses: [PolicyClause] = [], location: SourceLocation? = nil
    ) {
        self.name = name
        self.selectors = selectors
        self.clauses = clauses
        self.location = location
    }
}

/// One `match` line: a field and glob patterns, any of which may match.
public struct PolicySelector: Codable, Hashable, Sendable {
    /// What an item or request is matched on.
    public enum Field: String, CaseIterable, Codable, Hashable, Sendable {
        /// The item's service (`kSecAttrService`).
        case service
        /// The item's account (`kSecAttrAccount`).
        case account
        /// The item's access group.
        case accessGroup = "access-group"
        /// The item's label; an item without one matches only `*`.
        case label
        /// The calling program's executable path (embedded: the current executable; broker: the peer's).
        case program
        /// The item's protection class, by Apple's name (`whenUnlockedThisDeviceOnly`).
        case protection = "class"
    }

    /// The field.
    public var field: Field
    /// Glob patterns (`*` any run of characters, `?` one character); one must match.
    public var patterns: [String]

    /// A selector.
    public init(field: Field, patterns: [String]) {
        self.field = field
        self.patterns = patterns
    }
}

/// `on OPS EFFECT`: an effect applied to some operations.
public struct PolicyClause: Codable, Hashable, Sendable {
    /// The operations the effect applies to.
    public var actions: [PolicyAction]
    /// The effect.
    public var effect: PolicyEffect
    /// Where the clause starts.
    public var location: SourceLocation?

    /// A clause.
    public init(actions: [PolicyAction], effect: PolicyEffect, location: SourceLocation? = nil) {
        self.actions = actions
        self.effect = effect
        self.location = location
    }
}

/// What a clause does.
public enum PolicyEffect: Codable, Hashable, Sendable {
    /// `require at-least "<class> <flags>"`: items written must have an access control at
    /// least as strong as this one (see ``StrengthAnalysis``). `protection` nil: any class.
    case atLeast(protection: ProtectionClass?, flags: AccessControlFlags)
    /// `require fresh 30s`: a proof older than this many seconds does not count for the
    /// operation, whatever the reuse window.
    case fresh(seconds: Int)
    /// `require passcode`, `require biometry + passcode or companion`: one of these factor
    /// sets must also be proved.
    case factors(Requirement)
    /// `forbid`: the operation is denied.
    case forbid
}

/// `grant access-group "G" to program "P", …`: only these programs may use the group.
public struct PolicyGrant: Codable, Hashable, Sendable {
    /// The access group (exact name).
    public var accessGroup: String
    /// Program path globs.
    public var programs: [String]
    /// Where the grant starts.
    public var location: SourceLocation?

    /// The grant's id in explanations and audit records: `grant:<group>`, plus `@<file name>:<line>`
    /// when known (the file's last path component, so the id does not depend on where it is installed).
    public var id: String {
        if let location {
            let name = location.file.split(separator: "/").last.map(String.init) ?? location.file
            return "grant:\(accessGroup)@\(name)" + (location.line > 0 ? ":\(location.line)" : "")
        }
        return "grant:\(accessGroup)"
    }

    /// A grant.
    public init(accessGroup: String, programs: [String], location: SourceLocation? = nil) {
        self.accessGroup = accessGroup
        self.programs = programs
        self.location = location
    }
}

// MARK: - Codable for the flag set (names, not bits)

extension PolicyEffect {
    private enum CodingKeys: String, CodingKey { case kind, protection, flags, seconds, requirement }

    /// Decodes `{"kind": "atLeast"|"fresh"|"factors"|"forbid", …}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(String.self, forKey: .kind) {
        case "atLeast":
            let names = try container.decodeIfPresent([String].self, forKey: .flags) ?? []
            var flags = AccessControlFlags()
            for name in names {
                guard let flag = AccessControlFlags.flag(named: name) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .flags, in: container, debugDescription: "unknown access-control flag '\(name)'")
                }
                flags.formUnion(flag)
            }
            self = .atLeast(
                protection: try container.decodeIfPresent(ProtectionClass.self, forKey: .protection), flags: flags)
        case "fresh":
            self = .fresh(seconds: try container.decode(Int.self, forKey: .seconds))
        case "factors":
            self = .factors(try container.decode(Requirement.self, forKey: .requirement))
        case "forbid":
            self = .forbid
        case let other:
            throw DecodingError.dataCorruptedError(
                forKey: .kind, in: container, debugDescription: "unknown effect '\(other)'")
        }
    }

    /// Encodes `{"kind": …}` with the effect's fields.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .atLeast(let protection, let flags):
            try container.encode("atLeast", forKey: .kind)
            try container.encodeIfPresent(protection, forKey: .protection)
            try container.encode(flags.names, forKey: .flags)
        case .fresh(let seconds):
            try container.encode("fresh", forKey: .kind)
            try container.encode(seconds, forKey: .seconds)
        case .factors(let requirement):
            try container.encode("factors", forKey: .kind)
            try container.encode(requirement, forKey: .requirement)
        case .forbid:
            try container.encode("forbid", forKey: .kind)
        }
    }
}

extension PolicyAction {
    /// The action that is `operation`: each access-control operation is an action of the same
    /// name (the tests check every one).
    public init(_ operation: Operation) {
        // Every operation's name is an action's.
        self = PolicyAction(rawValue: operation.rawValue)!
    }

    /// The access-control operation of the same name; nil for `export`, `import` and `list`,
    /// which the item's access control does not name.
    public var operation: Operation? { Operation(rawValue: rawValue) }

    /// The operation the item's own access control is evaluated for: an export reads, an
    /// import adds, and a list is checked as strictly as a delete.
    public var evaluatedOperation: Operation {
        switch self {
        case .add, .import: .add
        case .update: .update
        case .delete, .list: .delete
        case .read, .export: .read
        case .sign: .sign
        case .computeKey: .computeKey
        }
    }
}
