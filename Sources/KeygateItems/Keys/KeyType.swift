/// The kinds of key a keeper makes: NIST P-256, as the Secure Enclave holds (spec §9.2.1), and
/// Ed25519, a Linux extension for OpenSSH users (Apple's keychain has no such key type).
public enum KeyType: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    /// NIST P-256 (`kSecAttrKeyTypeECSECPrimeRandom`, 256 bits): ECDSA signing and ECDH.
    case p256
    /// Ed25519 (RFC 8032): signing only.
    case ed25519

    /// `kSecAttrKeySizeInBits`: 256 for both.
    public var sizeInBits: Int { 256 }

    /// The `kSecAttrKeyType` value: Apple's `"73"` for P-256; `"keygate.ed25519"` for the
    /// extension, which no Apple value names.
    public var appleKeyType: String {
        switch self {
        case .p256: "73"
        case .ed25519: "keygate.ed25519"
        }
    }

    /// The raw name (`p256`, `ed25519`), as the command line spells it.
    public var description: String { rawValue }
}
