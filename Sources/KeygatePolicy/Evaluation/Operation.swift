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

    /// The raw name.
    public var description: String { rawValue }
}
