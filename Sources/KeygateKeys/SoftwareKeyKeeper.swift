public import KeygateItems
public import KeygatePolicy

/// The keeper that holds keys in software: its blob is the private key itself (a DER
/// `ECPrivateKey` for P-256, the 32-byte seed for Ed25519, behind a 5-byte header naming the
/// format and type), so it is only as safe as the place that seals and keeps the blob. In
/// embedded mode that is the user's own store and process (weaker: any process of the user that
/// reads the store and its key file has the key); in broker mode it is `keygated`'s per-user
/// store, sealed under the daemon's keys, and the keys are used only inside the daemon.
public struct SoftwareKeyKeeper: KeyKeeper {
    /// `keygate.software`.
    public let tokenID = "keygate.software"

    private static let magic: [UInt8] = Array("kgk1".utf8)

    /// The software keeper.
    public init() {}

    /// Makes a key with libcrypto (P-256) or libsodium (Ed25519) randomness.
    public func generate(_ type: KeyType) throws(KeygateError) -> KeptKey {
        switch type {
        case .p256:
            let (privateKey, point) = try P256.generate()
            return KeptKey(blob: Self.blob(.p256, privateKey), publicKey: try PublicKey(type: .p256, bytes: point))
        case .ed25519:
            let (seed, publicKey) = Ed25519.generate()
            return KeptKey(
                blob: Self.blob(.ed25519, seed), publicKey: try PublicKey(type: .ed25519, bytes: publicKey))
        }
    }

    /// A blob for a private key made elsewhere (`keygate key import`): a DER `ECPrivateKey` for
    /// P-256, the 32-byte seed for Ed25519; checked by deriving its public key.
    /// - Throws: `errSecParam` when the material is not a key of `type`.
    public func adopt(_ material: SecretData, type: KeyType) throws(KeygateError) -> KeptKey {
        let blob = Self.blob(type, material)
        let kept: KeptKey
        do throws(KeygateError) {
            kept = KeptKey(blob: blob, publicKey: try publicKey(of: blob, type: type))
            // A P-256 DER carries its point beside the scalar: it must be the scalar's own (a
            // signature by the scalar verifies under it), or the key would sign as another.
            let probe = P256.sha256(Array("keygate import check".utf8))
            if type == .p256,
                try !P256.verify(P256.sign(digest: probe, with: material), digest: probe, point: kept.publicKey.bytes)
            {
                throw KeygateError(.param, "its public point is not its private scalar's")
            }
        } catch {
            throw KeygateError(
                .param, "the imported private key is not a \(type) key: \(error.message)", cause: error.cause)
        }
        return kept
    }

    /// Reads the public key back from the private key.
    public func publicKey(of blob: SecretData, type: KeyType) throws(KeygateError) -> PublicKey {
        let material = try Self.material(of: blob, type: type)
        switch type {
        case .p256: return try PublicKey(type: .p256, bytes: try P256.point(ofPrivate: material))
        case .ed25519:
            guard material.count == 32 else { throw Self.foreign }
            return try PublicKey(type: .ed25519, bytes: Ed25519.publicKey(ofSeed: material))
        }
    }

    /// Signs; the message algorithm hashes first, as Apple's client does (spec §9.9.1).
    public func sign(_ input: [UInt8], algorithm: SignatureAlgorithm, with blob: SecretData, type: KeyType)
        throws(KeygateError) -> [UInt8]
    {
        guard algorithm.keyType == type else {
            throw KeygateError(.param, "algorithm not supported by the key: \(algorithm) on a \(type) key")
        }
        let material = try Self.material(of: blob, type: type)
        switch algorithm {
        case .ecdsaSignatureMessageX962SHA256:
            return try P256.sign(digest: P256.sha256(input), with: material)
        case .ecdsaSignatureDigestX962SHA256:
            guard input.count == 32 else {
                throw KeygateError(.param, "bad digest size: \(input.count) bytes, not the 32 of SHA-256")
            }
            return try P256.sign(digest: input, with: material)
        case .ed25519:
            guard material.count == 32 else { throw Self.foreign }
            return Ed25519.sign(input, seed: material)
        }
    }

    /// ECDH on P-256; Ed25519 keys do no key agreement (`errSecParam`).
    public func sharedSecret(with peer: PublicKey, using blob: SecretData, type: KeyType) throws(KeygateError)
        -> SecretData
    {
        guard type == .p256, peer.type == .p256 else {
            throw KeygateError(.param, "algorithm not supported by the key: ECDH needs two P-256 keys")
        }
        return try P256.sharedSecret(try Self.material(of: blob, type: type), peer.bytes)
    }

    // MARK: - The blob

    private static let foreign = KeygateError(.decode, "the key blob is not one of this keeper's")

    private static func typeByte(_ type: KeyType) -> UInt8 { type == .p256 ? 1 : 2 }

    private static func blob(_ type: KeyType, _ material: SecretData) -> SecretData {
        material.withUnsafeBytes { raw in
            var bytes = magic + [typeByte(type)] + Array(raw)
            defer { SecretData.wipe(&bytes) }
            return SecretData(bytes: bytes)
        }
    }

    private static func material(of blob: SecretData, type: KeyType) throws(KeygateError) -> SecretData {
        try blob.withUnsafeBytes { (raw) throws(KeygateError) -> SecretData in
            guard raw.count > 5, raw.prefix(4).elementsEqual(magic) else { throw foreign }
            guard raw[4] == typeByte(type) else {
                throw KeygateError(.decode, "the key blob holds another type of key than its record says (\(type))")
            }
            return SecretData(bytes: raw.dropFirst(5))
        }
    }
}
