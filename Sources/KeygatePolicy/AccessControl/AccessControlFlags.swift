/// The constraints and options of an access control, with Apple's raw values
/// (`SecAccessControlCreateFlags`, spec §1.1).
///
/// The names returned by ``names`` are Apple's Swift spellings and are the stable
/// text form: they are stored in policy files and audit records, so they never change.
public struct AccessControlFlags: OptionSet, Hashable, Sendable {
    /// The bit pattern, equal to Apple's `CFOptionFlags` value.
    public let rawValue: UInt

    /// Wraps a bit pattern (unknown bits are kept and rejected by ``AccessControl`` creation).
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// Biometry or the device passcode (`1`). Cannot be combined with other constraints.
    public static let userPresence = AccessControlFlags(rawValue: 1 << 0)
    /// Any enrolled biometry; survives enrollment changes (`2`).
    public static let biometryAny = AccessControlFlags(rawValue: 1 << 1)
    /// The biometry set enrolled when the item was added; an enrollment change invalidates the item (`8`).
    public static let biometryCurrentSet = AccessControlFlags(rawValue: 1 << 3)
    /// The device passcode, on Linux the account password proved through PAM (`16`).
    public static let devicePasscode = AccessControlFlags(rawValue: 1 << 4)
    /// A paired companion device (`32`).
    public static let companion = AccessControlFlags(rawValue: 1 << 5)
    /// With two or more constraints, at least one must be satisfied (`0x4000`).
    public static let or = AccessControlFlags(rawValue: 1 << 14)
    /// With two or more constraints, all must be satisfied (`0x8000`); the default.
    public static let and = AccessControlFlags(rawValue: 1 << 15)
    /// The constraints govern private-key operations instead of item decryption (`1 << 30`).
    public static let privateKeyUsage = AccessControlFlags(rawValue: 1 << 30)
    /// An application-supplied password is also required (`1 << 31`).
    public static let applicationPassword = AccessControlFlags(rawValue: 1 << 31)

    /// Deprecated spelling of ``biometryAny``.
    public static let touchIDAny = biometryAny
    /// Deprecated spelling of ``biometryCurrentSet``.
    public static let touchIDCurrentSet = biometryCurrentSet
    /// Deprecated spelling of ``companion``.
    public static let watch = companion

    /// Every defined flag with its stable name, in raw-value order.
    public static let named: [(name: String, flag: AccessControlFlags)] = [
        ("userPresence", .userPresence),
        ("biometryAny", .biometryAny),
        ("biometryCurrentSet", .biometryCurrentSet),
        ("devicePasscode", .devicePasscode),
        ("companion", .companion),
        ("or", .or),
        ("and", .and),
        ("privateKeyUsage", .privateKeyUsage),
        ("applicationPassword", .applicationPassword),
    ]

    /// Deprecated names accepted when parsing, mapped to the flag they alias.
    public static let deprecatedNames: [(name: String, flag: AccessControlFlags)] = [
        ("touchIDAny", .touchIDAny),
        ("touchIDCurrentSet", .touchIDCurrentSet),
        ("watch", .watch),
    ]

    /// All bits Apple defines.
    public static let allDefined: AccessControlFlags = named.reduce(into: AccessControlFlags()) {
        $0.formUnion($1.flag)
    }

    /// The constraint flags (the ones that need a factor), in Apple's construction order.
    public static let constraintFlags: [AccessControlFlags] = [
        .userPresence, .devicePasscode, .biometryAny, .biometryCurrentSet, .companion,
    ]

    /// The stable names of the set flags, in raw-value order; unknown bits are shown as hex.
    public var names: [String] {
        var result = Self.named.filter { contains($0.flag) }.map(\.name)
        let unknown = rawValue & ~Self.allDefined.rawValue
        if unknown != 0 { result.append("0x" + String(unknown, radix: 16)) }
        return result
    }

    /// Parses a comma-separated list of Apple flag names (`biometryAny,devicePasscode,or`).
    ///
    /// Surrounding spaces are ignored and deprecated names are accepted. Every word must
    /// name a flag: an empty or whitespace-only list, or an empty word (`a,,b`, a trailing
    /// comma), is refused; to mean "no flags", give no list at all.
    /// - Throws: ``KeygateError`` with `errSecParam` naming the first unknown or empty word.
    public init(parsing text: String) throws(KeygateError) {
        self.init()
        if text.trimmingSpaces().isEmpty {
            throw KeygateError(.param, "empty access-control flag list; omit it to mean no flags")
        }
        for word in text.split(separator: ",", omittingEmptySubsequences: false) {
            let name = word.trimmingSpaces()
            if name.isEmpty {
                throw KeygateError(.param, "empty access-control flag in '\(text)'")
            }
            guard let flag = Self.flag(named: name) else {
                throw KeygateError(
                    .param,
                    "unknown access-control flag '\(name)' (expected one of: "
                        + Self.named.map(\.name).joined(separator: ", ") + ")")
            }
            formUnion(flag)
        }
    }

    /// The flag with this name (current or deprecated spelling), or nil.
    public static func flag(named name: some StringProtocol) -> AccessControlFlags? {
        if let hit = named.first(where: { $0.name == name }) { return hit.flag }
        return deprecatedNames.first(where: { $0.name == name })?.flag
    }
}

extension AccessControlFlags: CustomStringConvertible {
    /// The comma-separated names, or `none`.
    public var description: String { isEmpty ? "none" : names.joined(separator: ",") }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    func trimmingSpaces() -> String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
