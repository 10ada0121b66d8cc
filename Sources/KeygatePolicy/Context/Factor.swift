/// A way of proving presence that the evaluator can ask for and an authenticator can prove.
public enum Factor: String, CaseIterable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The device passcode; on Linux, the account password proved through PAM.
    case passcode
    /// Biometry (fingerprint or face), proved through a biometric PAM service.
    case biometry
    /// A paired companion device.
    case companion
    /// An application-supplied password (`applicationPassword`, `prp`).
    case applicationPassword

    /// The raw name.
    public var description: String { rawValue }

    var bit: UInt8 {
        switch self {
        case .passcode: 1 << 0
        case .biometry: 1 << 1
        case .companion: 1 << 2
        case .applicationPassword: 1 << 3
        }
    }
}

/// A set of factors, stored in one byte.
public struct FactorSet: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The bit pattern.
    public let rawValue: UInt8
    /// Wraps a bit pattern.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// The set holding one factor.
    public init(_ factor: Factor) { self.init(rawValue: factor.bit) }

    /// The passcode.
    public static let passcode = FactorSet(.passcode)
    /// Biometry.
    public static let biometry = FactorSet(.biometry)
    /// A companion device.
    public static let companion = FactorSet(.companion)
    /// An application password.
    public static let applicationPassword = FactorSet(.applicationPassword)

    /// Whether `factor` is in the set.
    public func contains(_ factor: Factor) -> Bool { rawValue & factor.bit != 0 }

    /// The factors in the set, biometry first (the order an authenticator tries them in).
    public var factors: [Factor] {
        [Factor.biometry, .passcode, .companion, .applicationPassword].filter { contains($0) }
    }

    /// `biometry + passcode`, or `none` for the empty set.
    public var description: String {
        isEmpty ? "none" : factors.map(\.rawValue).joined(separator: " + ")
    }
}
