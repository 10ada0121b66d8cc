/// What the caller must prove for a decision to become `allow`: a choice between up to
/// four combinations of factors, any one of which is enough.
///
/// The evaluator lists only factors that are missing or stale and only alternatives that
/// are possible now (biometry locked out is left out, so `userPresence` asks for the
/// passcode alone). Stored inline, so building one never allocates.
public struct Requirement: Hashable, Sendable, CustomStringConvertible {
    private var packed: UInt32 = 0
    /// How many alternatives there are.
    public private(set) var count: Int = 0

    /// Room for the alternatives of a flat Apple tree (at most 3: three leaves, choose one or two).
    public static let capacity = 4

    /// No alternative (nothing would satisfy it).
    public init() {}

    /// A requirement with these alternatives, in order; duplicates and extras past ``capacity`` are dropped.
    public init(_ alternatives: [FactorSet]) {
        for alternative in alternatives { append(alternative) }
    }

    mutating func append(_ alternative: FactorSet) {
        guard count < Self.capacity, !alternative.isEmpty, !contains(alternative) else { return }
        packed |= UInt32(alternative.rawValue) << (8 * UInt32(count))
        count += 1
    }

    /// Reorders the alternatives so those using biometry come first (stable), the order in
    /// which Apple's `deviceOwnerAuthentication` tries the factors.
    mutating func orderBiometryFirst() {
        var reordered = Requirement()
        for pass in 0..<2 {
            for index in 0..<count where self[index].contains(.biometry) == (pass == 0) {
                reordered.append(self[index])
            }
        }
        self = reordered
    }

    /// The alternative at `index` (0-based).
    public subscript(index: Int) -> FactorSet {
        precondition(index >= 0 && index < count, "requirement index out of range")
        return FactorSet(rawValue: UInt8(truncatingIfNeeded: packed >> (8 * UInt32(index))))
    }

    /// Whether `alternative` is one of the alternatives.
    public func contains(_ alternative: FactorSet) -> Bool {
        for index in 0..<count where self[index] == alternative { return true }
        return false
    }

    /// The alternatives, in the order an authenticator should offer them (biometry first).
    public var alternatives: [FactorSet] { (0..<count).map { self[$0] } }

    /// Every factor that appears in some alternative.
    public var allFactors: FactorSet {
        var all = FactorSet()
        for index in 0..<count { all.formUnion(self[index]) }
        return all
    }

    /// True when proving `proved` satisfies one of the alternatives.
    public func isSatisfied(by proved: FactorSet) -> Bool {
        for index in 0..<count where proved.isSuperset(of: self[index]) { return true }
        return false
    }

    /// `biometry | passcode`, `biometry + passcode`, `(biometry + applicationPassword) | passcode`.
    public var description: String {
        guard count > 0 else { return "nothing possible" }
        return alternatives.map { count > 1 && $0.factors.count > 1 ? "(\($0))" : "\($0)" }.joined(separator: " | ")
    }
}

extension Requirement: Codable {
    /// Decodes a list of alternatives, each a list of factor names.
    public init(from decoder: any Decoder) throws {
        let lists = try decoder.singleValueContainer().decode([[Factor]].self)
        self.init(lists.map { $0.reduce(into: FactorSet()) { $0.insert(FactorSet($1)) } })
    }

    /// Encodes a list of alternatives, each a list of factor names.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(alternatives.map(\.factors))
    }
}
