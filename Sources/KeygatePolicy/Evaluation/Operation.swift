/// What a caller wants to do with an item; each maps to an operation of Apple's ACL.
public enum Operation: String, CaseIterable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// Read the item's data (`od`, decrypt).
    case read
    /// Add a new item (`oe`, encrypt, plus the bind step of spec §1.4).
    case add
    /// Change the item (decrypts first, so `od` applies, spec §7.4).
    case update
    /// Delete the item (`odel`, always `true` for access controls made from flags).
    case delete
    /// Sign with a key's private half (`osgn`, spec §9.5, §9.6).
    case sign
    /// Compute a key with a key's private half: ECDH, and ECIES decryption through it (`ock`).
    case computeKey

    /// The operation's key in Apple's ACL: `od`, `oe`, `odel`, `osgn`, `ock` (an update is
    /// decided as `od`, spec §7.4).
    public var aclName: String {
        switch self {
        case .read, .update: "od"
        case .add: "oe"
        case .delete: "odel"
        case .sign: "osgn"
        case .computeKey: "ock"
        }
    }

    /// Whether this is an operation on a key's private half (`osgn`, `ock`).
    public var isKeyOperation: Bool { self == .sign || self == .computeKey }

    /// The raw name.
    public var description: String { rawValue }
}
