/// An `OSStatus`-style result code with Apple's numeric value and name.
///
/// Keygate reports every failure with the same number Apple's `SecItem*` functions
/// return for it (spec §6), so code ported from Apple platforms can branch on the
/// same values. The type is open: an unknown code still round-trips, it just has no
/// name of its own.
public struct KeygateStatus: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The numeric code, as Apple's `OSStatus`.
    public let rawValue: Int32

    /// Wraps a numeric code.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// No error.
    public static let success = KeygateStatus(rawValue: 0)
    /// Function or operation not implemented.
    public static let unimplemented = KeygateStatus(rawValue: -4)
    /// The disk is full.
    public static let diskFull = KeygateStatus(rawValue: -34)
    /// An I/O error.
    public static let io = KeygateStatus(rawValue: -36)
    /// A parameter was invalid.
    public static let param = KeygateStatus(rawValue: -50)
    /// Memory could not be allocated.
    public static let allocate = KeygateStatus(rawValue: -108)
    /// The user cancelled the operation.
    public static let userCanceled = KeygateStatus(rawValue: -128)
    /// A bad request was made.
    public static let badReq = KeygateStatus(rawValue: -909)
    /// An internal component failed.
    public static let internalComponent = KeygateStatus(rawValue: -2070)
    /// No keychain, or no class key, is available.
    public static let notAvailable = KeygateStatus(rawValue: -25291)
    /// The store is read-only.
    public static let readOnly = KeygateStatus(rawValue: -25292)
    /// Authentication failed; also the catch-all for authentication errors (spec §4.5).
    public static let authFailed = KeygateStatus(rawValue: -25293)
    /// An item with the same primary key already exists.
    public static let duplicateItem = KeygateStatus(rawValue: -25299)
    /// The item could not be found.
    public static let itemNotFound = KeygateStatus(rawValue: -25300)
    /// The attribute does not exist for this item class.
    public static let noSuchAttr = KeygateStatus(rawValue: -25303)
    /// The item class does not exist.
    public static let noSuchClass = KeygateStatus(rawValue: -25306)
    /// User interaction is needed but not allowed, or the class key is locked.
    public static let interactionNotAllowed = KeygateStatus(rawValue: -25308)
    /// Apple's private "please authenticate" signal; never returned to callers.
    public static let authNeeded = KeygateStatus(rawValue: -25330)
    /// The data could not be decoded (tampered or undecryptable).
    public static let decode = KeygateStatus(rawValue: -26275)
    /// An internal error.
    public static let internalError = KeygateStatus(rawValue: -26276)
    /// A required entitlement (access group) is missing.
    public static let missingEntitlement = KeygateStatus(rawValue: -34018)
    /// A database migration is pending while the device is locked.
    public static let upgradePending = KeygateStatus(rawValue: -34019)
    /// The API is restricted for this caller.
    public static let restrictedAPI = KeygateStatus(rawValue: -34020)

    /// Keygate's own status, not Apple's: an organisation policy rule denied the operation.
    public static let deniedByPolicy = KeygateStatus(rawValue: -99_010)

    /// Every status with a name, in the order of spec §6.
    public static let allNamed: [KeygateStatus] = [
        .success, .unimplemented, .diskFull, .io, .param, .allocate, .userCanceled, .badReq,
        .internalComponent, .notAvailable, .readOnly, .authFailed, .duplicateItem, .itemNotFound,
        .noSuchAttr, .noSuchClass, .interactionNotAllowed, .decode, .internalError, .authNeeded,
        .missingEntitlement, .upgradePending, .restrictedAPI,
    ]

    /// Apple's constant name, such as `errSecItemNotFound`, or nil for an unnamed code.
    public var name: String? { Self.table[rawValue]?.name }

    /// A readable one-line explanation, like `SecCopyErrorMessageString`.
    public var message: String { Self.table[rawValue]?.message ?? "Unknown status \(rawValue)." }

    /// The status for an Apple name such as `errSecParam`, or nil.
    public init?(name: String) {
        guard let entry = Self.table.first(where: { $0.value.name == name }) else { return nil }
        self.init(rawValue: entry.key)
    }

    /// `errSecName number` (for example `errSecParam -50`), or `OSStatus number` for an unnamed code.
    public var description: String {
        if let name { return "\(name) \(rawValue)" }
        return "OSStatus \(rawValue)"
    }

    private static let table: [Int32: (name: String, message: String)] = [
        0: ("errSecSuccess", "No error."),
        -4: ("errSecUnimplemented", "Function or operation not implemented."),
        -34: ("errSecDiskFull", "The disk is full."),
        -36: ("errSecIO", "An I/O error occurred."),
        -50: ("errSecParam", "One or more parameters passed to a function were not valid."),
        -108: ("errSecAllocate", "Failed to allocate memory."),
        -128: ("errSecUserCanceled", "User canceled the operation."),
        -909: ("errSecBadReq", "Bad parameter or invalid state for operation."),
        -2070: ("errSecInternalComponent", "An internal component failed."),
        -25291: ("errSecNotAvailable", "No keychain is available, or the item's protection class is not available."),
        -25292: ("errSecReadOnly", "The keychain is read-only."),
        -25293: ("errSecAuthFailed", "The user name or passphrase you entered is not correct."),
        -25299: ("errSecDuplicateItem", "The specified item already exists in the keychain."),
        -25300: ("errSecItemNotFound", "The specified item could not be found in the keychain."),
        -25303: ("errSecNoSuchAttr", "The specified attribute does not exist."),
        -25306: ("errSecNoSuchClass", "The specified item class does not exist."),
        -25308: (
            "errSecInteractionNotAllowed",
            "User interaction is not allowed, or the item's protection class is locked."
        ),
        -25330: ("errSecAuthNeeded", "Authentication is needed to perform this operation."),
        -26275: ("errSecDecode", "Unable to decode the provided data."),
        -26276: ("errSecInternal", "An internal error occurred."),
        -34018: ("errSecMissingEntitlement", "A required entitlement isn't present."),
        -34019: ("errSecUpgradePending", "The keychain is being upgraded; try again after the device is unlocked."),
        -34020: ("errSecRestrictedAPI", "This API is restricted for the caller."),
        -99010: ("keygateDeniedByPolicy", "An organisation policy rule denied the operation."),
    ]
}
