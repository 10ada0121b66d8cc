/// Apple's ECIES algorithms over P-256 (spec §9.9.8): an ephemeral public point, AES-GCM with a
/// 16-byte IV, the key (and, for the variable-IV forms, the IV) from the ANSI X9.63 KDF with
/// SHA-256 over the ECDH secret, the ephemeral point as shared info. For P-256 the cofactor is 1,
/// so the standard and cofactor forms give the same bytes (9.9.6).
public enum ECIESAlgorithm: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    /// `eciesEncryptionCofactorVariableIVX963SHA256AESGCM`, the one Apple's header points new
    /// code to (9.9.9): the KDF gives the 16-byte key and the 16-byte IV.
    case cofactorVariableIVX963SHA256AESGCM = "algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV"
    /// `eciesEncryptionStandardVariableIVX963SHA256AESGCM`.
    case standardVariableIVX963SHA256AESGCM = "algid:encrypt:ECIES:ECDH:KDFX963:SHA256:AESGCM-KDFIV"
    /// `eciesEncryptionCofactorX963SHA256AESGCM`, the legacy form: the IV is 16 zero bytes.
    case cofactorX963SHA256AESGCM = "algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM"
    /// `eciesEncryptionStandardX963SHA256AESGCM`, legacy: the IV is 16 zero bytes.
    case standardX963SHA256AESGCM = "algid:encrypt:ECIES:ECDH:KDFX963:SHA256:AESGCM"

    /// Whether the KDF also gives the IV (else it is 16 zero bytes).
    public var variableIV: Bool {
        switch self {
        case .cofactorVariableIVX963SHA256AESGCM, .standardVariableIVX963SHA256AESGCM: true
        case .cofactorX963SHA256AESGCM, .standardX963SHA256AESGCM: false
        }
    }

    /// The Apple raw value.
    public var description: String { rawValue }
}
