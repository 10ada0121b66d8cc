/// How a key signs: Apple's `SecKeyAlgorithm` values for P-256 (spec §9.1, §9.9), and raw
/// Ed25519 for the extension key type.
public enum SignatureAlgorithm: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    /// `ecdsaSignatureMessageX962SHA256`: the message is hashed with SHA-256 by the caller's side
    /// (spec §9.9.1), then signed; the signature is DER X9.62 `SEQUENCE { r, s }` (§9.9.3).
    case ecdsaSignatureMessageX962SHA256 = "algid:sign:ECDSA:message-X962:SHA256"
    /// `ecdsaSignatureDigestX962SHA256`: the input is the 32-byte SHA-256 digest itself
    /// (any other length is `errSecParam`, "bad digest size", §9.8.2); DER output.
    case ecdsaSignatureDigestX962SHA256 = "algid:sign:ECDSA:digest-X962:SHA256"
    /// Ed25519 over the whole message (RFC 8032 PureEdDSA); the 64-byte raw signature.
    case ed25519 = "keygate:sign:Ed25519"

    /// The key type the algorithm signs with.
    public var keyType: KeyType {
        switch self {
        case .ecdsaSignatureMessageX962SHA256, .ecdsaSignatureDigestX962SHA256: .p256
        case .ed25519: .ed25519
        }
    }

    /// The command line's name: `ecdsa-sha256`, `ecdsa-digest-sha256`, `ed25519`.
    public var commandName: String {
        switch self {
        case .ecdsaSignatureMessageX962SHA256: "ecdsa-sha256"
        case .ecdsaSignatureDigestX962SHA256: "ecdsa-digest-sha256"
        case .ed25519: "ed25519"
        }
    }

    /// The algorithm a command-line name or Apple raw value names, or nil.
    public init?(named name: String) {
        guard let found = Self.allCases.first(where: { $0.commandName == name || $0.rawValue == name }) else {
            return nil
        }
        self = found
    }

    /// The Apple raw value (`algid:sign:…`).
    public var description: String { rawValue }
}
