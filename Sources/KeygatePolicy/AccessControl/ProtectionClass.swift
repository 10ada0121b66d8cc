/// When an item's data is readable: the seven `kSecAttrAccessible` values, with
/// Apple's raw strings (spec §2).
///
/// The raw values are stored in databases and audit records and never change.
public enum ProtectionClass: String, CaseIterable, Hashable, Sendable, Codable {
    /// Readable while unlocked and only while a passcode is set; never migrates (`akpu`).
    case whenPasscodeSetThisDeviceOnly = "akpu"
    /// Readable while unlocked; never migrates (`aku`).
    case whenUnlockedThisDeviceOnly = "aku"
    /// Readable while unlocked (`ak`); the default for new items.
    case whenUnlocked = "ak"
    /// Readable after the first unlock since boot; never migrates (`cku`).
    case afterFirstUnlockThisDeviceOnly = "cku"
    /// Readable after the first unlock since boot (`ck`).
    case afterFirstUnlock = "ck"
    /// Always readable; deprecated, refused for new items (`dku`).
    case alwaysThisDeviceOnly = "dku"
    /// Always readable; deprecated, refused for new items (`dk`).
    case always = "dk"

    /// The class new items get when none is given: ``whenUnlocked``.
    public static let `default` = ProtectionClass.whenUnlocked

    /// Apple's name without the `kSecAttrAccessible` prefix, such as `whenUnlockedThisDeviceOnly`.
    public var name: String {
        switch self {
        case .whenPasscodeSetThisDeviceOnly: "whenPasscodeSetThisDeviceOnly"
        case .whenUnlockedThisDeviceOnly: "whenUnlockedThisDeviceOnly"
        case .whenUnlocked: "whenUnlocked"
        case .afterFirstUnlockThisDeviceOnly: "afterFirstUnlockThisDeviceOnly"
        case .afterFirstUnlock: "afterFirstUnlock"
        case .alwaysThisDeviceOnly: "alwaysThisDeviceOnly"
        case .always: "always"
        }
    }

    /// Parses Apple's name without prefix (`whenUnlocked`) or a raw value (`ak`).
    /// - Throws: ``KeygateError`` with `errSecParam` naming the unknown word.
    public init(parsing text: String) throws(KeygateError) {
        let word = text.trimmingSpaces()
        if let byName = Self.allCases.first(where: { $0.name == word }) {
            self = byName
        } else if let byRaw = ProtectionClass(rawValue: word) {
            self = byRaw
        } else {
            throw KeygateError(
                .param,
                "unknown protection class '\(word)' (expected one of: "
                    + Self.allCases.map(\.name).joined(separator: ", ") + ")")
        }
    }

    /// True for the `ThisDeviceOnly` classes, which are never exported or migrated.
    public var isThisDeviceOnly: Bool {
        switch self {
        case .whenPasscodeSetThisDeviceOnly, .whenUnlockedThisDeviceOnly, .afterFirstUnlockThisDeviceOnly,
            .alwaysThisDeviceOnly:
            true
        case .whenUnlocked, .afterFirstUnlock, .always: false
        }
    }

    /// True for the deprecated `always` classes: readable, but refused for new items.
    public var isDeprecated: Bool { self == .always || self == .alwaysThisDeviceOnly }

    /// What the device must be like for this class's key to be available.
    public var availability: Availability {
        switch self {
        case .whenPasscodeSetThisDeviceOnly: .whenUnlockedWithPasscode
        case .whenUnlockedThisDeviceOnly, .whenUnlocked: .whenUnlocked
        case .afterFirstUnlockThisDeviceOnly, .afterFirstUnlock: .afterFirstUnlock
        case .alwaysThisDeviceOnly, .always: .always
        }
    }

    /// When a protection class's key is available.
    public enum Availability: Sendable, Hashable {
        /// The device is unlocked and a passcode is set.
        case whenUnlockedWithPasscode
        /// The device is unlocked.
        case whenUnlocked
        /// The device has been unlocked once since boot.
        case afterFirstUnlock
        /// Always.
        case always
    }
}

extension ProtectionClass: CustomStringConvertible {
    /// Apple's name without prefix.
    public var description: String { name }
}
