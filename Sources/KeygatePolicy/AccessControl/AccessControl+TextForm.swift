// The stable text form of an access control, in the vocabulary of Apple's
// `SecAccessControlRef` description (spec §1.3):
//
//     <prot>;<op>(<constraint>);…
//
// Keygate's form differs from Apple's only where Apple leaves the order unspecified: the
// entries are always `od`, `oe`, `odel` (or `dacl`; or `osgn`, `ock`, `oa`, `odel` for
// private-key usage), then `prp`; inside a k-of-n node `pkofn(k)` comes first, then the
// leaves in Apple's construction order (cpo, cup, cbio, cwtch). Data values are printed
// as Apple prints CFData: `<hex>`, and `<>` when empty. `pbioc` (Apple's catacomb UUID)
// has no Linux counterpart and is always `<>`.

extension AccessControl {
    /// The canonical text form, for example `aku;od(pkofn(1) cup(true) cbio(pbioc(<>) pbioh(<9f2c…>)));oe(true);odel(true)`.
    public var textForm: String {
        // The plain item (most of a store): one string, no list of entries to join.
        if !isPrivateKeyUsage && constraint.kind == .allow && !requiresApplicationPassword {
            return Self.plainTextForm(protection)
        }
        var entries: [String] = []
        let guarded = Self.text(for: constraint)
        if isPrivateKeyUsage {
            entries += ["osgn(\(guarded))", "ock(\(guarded))", "oa(true)", "odel(true)"]
        } else if constraint.kind == .allow {
            entries.append("dacl(true)")
        } else {
            entries += ["od(\(guarded))", "oe(true)", "odel(true)"]
        }
        if requiresApplicationPassword { entries.append("prp(true)") }
        return ([protection.rawValue] + entries).joined(separator: ";")
    }

    /// The text form of a plain item of `protection` (no constraint, no flags), as a literal: an
    /// audited decision on a plain item builds no string (the bench's "Gated read" rows).
    static func plainTextForm(_ protection: ProtectionClass) -> String {
        switch protection {
        case .whenPasscodeSetThisDeviceOnly: "akpu;dacl(true)"
        case .whenUnlockedThisDeviceOnly: "aku;dacl(true)"
        case .whenUnlocked: "ak;dacl(true)"
        case .afterFirstUnlockThisDeviceOnly: "cku;dacl(true)"
        case .afterFirstUnlock: "ck;dacl(true)"
        case .alwaysThisDeviceOnly: "dku;dacl(true)"
        case .always: "dk;dacl(true)"
        }
    }

    static func text(for constraint: Constraint) -> String {
        switch constraint.kind {
        case .allow: return "true"
        case .deny: return "false"
        case .leaves:
            var parts = constraint.isKOfN ? ["pkofn(\(constraint.threshold))"] : []
            for member in constraint.leaves.members {
                switch member {
                case .devicePolicy: parts.append("cpo(DeviceOwnerAuthentication)")
                case .passcode: parts.append("cup(true)")
                case .biometryAny: parts.append("cbio(pbioc(<>))")
                case .biometryCurrentSet:
                    parts.append("cbio(pbioc(<>) pbioh(<\(constraint.boundEnrollment?.hex ?? "")>))")
                default: parts.append("cwtch(true)")
                }
            }
            return parts.joined(separator: " ")
        }
    }

    /// Parses the text form back into an access control.
    ///
    /// Entries and node items may come in any order; everything else must be exactly the
    /// vocabulary ``textForm`` prints, and the result must be an access control that
    /// `SecAccessControlCreateWithFlags` could have made.
    /// - Throws: ``KeygateError`` with `errSecParam` naming what was wrong.
    public init(textForm text: String) throws(KeygateError) {
        var parser = TextFormParser(text: text)
        let (protectionText, entries) = try parser.parseAccessControl()
        guard let protection = ProtectionClass(rawValue: protectionText) else {
            throw parser.error("unknown protection '\(protectionText)' (expected a raw value such as ak or aku)")
        }
        var operations: [String: TextFormParser.Value] = [:]
        for entry in entries {
            guard operations.updateValue(entry.value, forKey: entry.key) == nil else {
                throw parser.error("operation '\(entry.key)' appears twice")
            }
        }
        var flags = AccessControlFlags()
        if operations.removeValue(forKey: "prp") != nil { flags.insert(.applicationPassword) }
        var guarded: TextFormParser.Value
        var allowsTrue = true
        if let value = operations["osgn"] {
            flags.insert(.privateKeyUsage)
            guarded = value
            try Self.expect(operations, ["osgn", "ock", "oa", "odel"], parser)
            guard operations["ock"] == value else { throw parser.error("'ock' must equal 'osgn'") }
        } else if operations["dacl"] != nil {
            guarded = .atom("true")
            try Self.expect(operations, ["dacl"], parser)
        } else {
            guard let value = operations["od"] else { throw parser.error("missing the 'od' entry") }
            guarded = value
            allowsTrue = false
            try Self.expect(operations, ["od", "oe", "odel"], parser)
        }
        for key in ["oe", "odel", "oa", "dacl"] {
            if let value = operations[key], value != .atom("true") { throw parser.error("'\(key)' must be true") }
        }
        var bound: EnrollmentSetHash?
        switch guarded {
        case .atom("true") where allowsTrue: break
        case .atom(let other): throw parser.error("unexpected constraint '\(other)'")
        case .items(let items):
            var threshold: Int?
            var leafCount = 0
            var seenKeys: Set<String> = []
            for item in items {
                guard seenKeys.insert(item.key).inserted else { throw parser.error("'\(item.key)' appears twice") }
                switch (item.key, item.value) {
                case ("pkofn", .atom(let k)):
                    guard !k.isEmpty, k.allSatisfy(\.isASCIIDigit), let k = Int(k), k >= 1 else {
                        throw parser.error("pkofn needs a positive number")
                    }
                    threshold = k
                    continue
                case ("cpo", .atom("DeviceOwnerAuthentication")): flags.insert(.userPresence)
                case ("cup", .atom("true")): flags.insert(.devicePasscode)
                case ("cwtch", .atom("true")): flags.insert(.companion)
                case ("cbio", .items(let bio)):
                    var seen: [String: TextFormParser.Value] = [:]
                    for part in bio {
                        guard seen.updateValue(part.value, forKey: part.key) == nil else {
                            throw parser.error("'\(part.key)' appears twice in cbio")
                        }
                    }
                    guard seen["pbioc"] == .atom("<>"), Set(seen.keys).isSubset(of: ["pbioc", "pbioh"]) else {
                        throw parser.error("cbio must hold pbioc(<>) and optionally pbioh(<hash>)")
                    }
                    switch seen["pbioh"] {
                    case nil:
                        flags.insert(.biometryAny)
                    case .atom("<>"):
                        flags.insert(.biometryCurrentSet)
                    case .atom(let hash) where hash.first == "<" && hash.last == ">":
                        guard let value = EnrollmentSetHash(hex: hash.dropFirst().dropLast()) else {
                            throw parser.error("pbioh must be <64 hex digits> or <>")
                        }
                        flags.insert(.biometryCurrentSet)
                        bound = value
                    default:
                        throw parser.error("pbioh must be <64 hex digits> or <>")
                    }
                default:
                    throw parser.error("unknown constraint item '\(item.key)'")
                }
                leafCount += 1
            }
            if leafCount >= 2 {
                guard let k = threshold else { throw parser.error("a node of \(leafCount) leaves needs pkofn(k)") }
                guard k == 1 || k == leafCount else {
                    throw parser.error(
                        "pkofn(\(k)) over \(leafCount) leaves cannot come from flags (k must be 1 or \(leafCount))")
                }
                flags.insert(k == 1 ? .or : .and)
            } else if threshold != nil {
                throw parser.error("pkofn needs two or more leaves")
            } else if leafCount == 0 {
                throw parser.error("empty constraint")
            }
        }
        var control = try AccessControl(protection: protection, flags: flags)
        if let bound { control = control.bound(to: bound) }
        self = control
    }

    private static func expect(
        _ operations: [String: TextFormParser.Value], _ keys: Set<String>, _ parser: TextFormParser
    ) throws(KeygateError) {
        let present = Set(operations.keys)
        if let extra = present.subtracting(keys).sorted().first {
            throw parser.error("unexpected operation '\(extra)'")
        }
        if let missing = keys.subtracting(present).sorted().first {
            throw parser.error("missing the '\(missing)' entry")
        }
    }
}

/// A small recursive-descent reader for the `key(value) key(value)` syntax of the text form.
struct TextFormParser {
    indirect enum Value: Equatable {
        case atom(String)
        case items([Item])
    }

    struct Item: Equatable {
        let key: String
        let value: Value
    }

    let text: String
    private let chars: [Character]
    private var position = 0

    init(text: String) {
        self.text = text
        self.chars = Array(text)
    }

    func error(_ problem: String) -> KeygateError {
        KeygateError(.param, "invalid access-control text '\(text)': \(problem)")
    }

    /// Apple's tree is at most op → node → leaf → parameter deep.
    private static let maximumDepth = 4

    mutating func parseAccessControl() throws(KeygateError) -> (String, [Item]) {
        let protection = readWord()
        guard !protection.isEmpty else { throw error("missing the protection class") }
        var entries: [Item] = []
        while position < chars.count {
            guard chars[position] == ";" else { throw error("expected ';' at offset \(position)") }
            position += 1
            entries.append(try parseItem(depth: 1))
        }
        return (protection, entries)
    }

    private mutating func parseItem(depth: Int) throws(KeygateError) -> Item {
        guard depth <= Self.maximumDepth else { throw error("nested deeper than \(Self.maximumDepth) levels") }
        let key = readWord()
        guard !key.isEmpty, position < chars.count, chars[position] == "(" else {
            throw error("expected key( at offset \(position)")
        }
        position += 1
        let value = try parseValue(depth: depth)
        guard position < chars.count, chars[position] == ")" else { throw error("expected ')' at offset \(position)") }
        position += 1
        return Item(key: key, value: value)
    }

    private mutating func parseValue(depth: Int) throws(KeygateError) -> Value {
        // An atom runs to the closing parenthesis; a list of items has a '(' before it.
        var lookahead = position
        while lookahead < chars.count, chars[lookahead] != ")", chars[lookahead] != "(" { lookahead += 1 }
        guard lookahead < chars.count, chars[lookahead] == "(" else {
            let atom = text(position..<lookahead)
            position = lookahead
            return .atom(atom)
        }
        var items: [Item] = []
        while true {
            items.append(try parseItem(depth: depth + 1))
            guard position < chars.count, chars[position] == " " else { break }
            position += 1
        }
        return .items(items)
    }

    private mutating func readWord() -> String {
        let start = position
        while position < chars.count, chars[position].isASCII, chars[position].isLetter || chars[position].isNumber {
            position += 1
        }
        return text(start..<position)
    }

    /// `chars[range]` as a string, character by character: `String(chars[range])` goes through
    /// the generic `String(Sequence)`, whose first use makes the runtime scan every protocol
    /// conformance in the program (start-up time of every `keygate` run that reads an item).
    private func text(_ range: Range<Int>) -> String {
        var text = ""
        for index in range { text.append(chars[index]) }
        return text
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
