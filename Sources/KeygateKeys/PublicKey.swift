public import KeygateItems
public import KeygatePolicy

/// The public half of a key: a plain software key, exportable in every form (spec §9.6:
/// `SecKeyCopyPublicKey` gives an ordinary public key).
///
/// P-256 keys are the 65-byte ANSI X9.63 uncompressed point `04‖X‖Y` (§9.9.5), checked to be on
/// the curve; Ed25519 keys are the 32-byte RFC 8032 encoding.
public struct PublicKey: Hashable, Sendable, CustomStringConvertible {
    /// The key type.
    public let type: KeyType
    /// The X9.63 point (P-256) or the 32 raw bytes (Ed25519).
    public let bytes: [UInt8]

    /// A public key from its bytes.
    /// - Throws: `errSecParam` naming what is wrong: a length other than 65 (P-256) or 32
    ///   (Ed25519), a compressed or foreign point encoding, a point not on the curve.
    public init(type: KeyType, bytes: [UInt8]) throws(KeygateError) {
        switch type {
        case .p256:
            guard bytes.count == 65, bytes[0] == 0x04 else {
                throw KeygateError(
                    .param, "a P-256 public key is the 65-byte X9.63 point 04‖X‖Y, not \(bytes.count) bytes")
            }
            try P256.checkPoint(bytes)
        case .ed25519:
            guard bytes.count == 32 else {
                throw KeygateError(.param, "an Ed25519 public key is 32 bytes, not \(bytes.count)")
            }
        }
        self.type = type
        self.bytes = bytes
    }

    /// `kSecAttrApplicationLabel`: the SHA-1 of the public key bytes (of the 65-byte point for
    /// P-256, spec §9.4.3).
    public var applicationLabel: [UInt8] { P256.sha1(bytes) }

    /// The X9.63 form, `04‖X‖Y` (`SecKeyCopyExternalRepresentation` of a P-256 public key);
    /// the raw 32 bytes for Ed25519.
    public var externalRepresentation: [UInt8] { bytes }

    /// Whether `signature` is `algorithm`'s signature of `input` under this key
    /// (`SecKeyVerifySignature`); false for a malformed signature or an algorithm of another type.
    public func isValidSignature(_ signature: [UInt8], for input: [UInt8], algorithm: SignatureAlgorithm) -> Bool {
        guard algorithm.keyType == type else { return false }
        switch algorithm {
        case .ecdsaSignatureMessageX962SHA256:
            return P256.verify(signature, digest: P256.sha256(input), point: bytes)
        case .ecdsaSignatureDigestX962SHA256:
            return input.count == 32 && P256.verify(signature, digest: input, point: bytes)
        case .ed25519:
            return Ed25519.verify(signature, message: input, publicKey: bytes)
        }
    }

    /// The type and the application label in hex: a public key is no secret, but a line that
    /// names it needs no more.
    public var description: String { "\(type) key \(Hex.string(applicationLabel))" }
}
