internal import CSodium
import KeygateItems
import KeygatePolicy

/// The libsodium calls for Ed25519 keys. A private key is its 32-byte seed; the 64-byte
/// signing key derived from it lives only for one call and is wiped.
enum Ed25519 {
    /// The DER SubjectPublicKeyInfo prefix of an Ed25519 key (RFC 8410): the 32 bytes follow.
    static let subjectPublicKeyInfoPrefix: [UInt8] = [
        0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
    ]

    private static let initialized: Bool = sodium_init() >= 0

    /// A new random seed and its public key.
    static func generate() -> (seed: SecretData, publicKey: [UInt8]) {
        precondition(initialized, "libsodium could not be initialised")
        let seed = SecretData.random(count: 32)
        return (seed, publicKey(ofSeed: seed))
    }

    /// The public key of `seed`.
    static func publicKey(ofSeed seed: SecretData) -> [UInt8] {
        withSigningKey(seed) { _, publicKey in publicKey }
    }

    /// The 64-byte signature of `message` by `seed`'s key.
    static func sign(_ message: [UInt8], seed: SecretData) -> [UInt8] {
        withSigningKey(seed) { secretKey, _ in
            var signature = [UInt8](repeating: 0, count: 64)
            _ = crypto_sign_detached(&signature, nil, message, UInt64(message.count), secretKey)
            return signature
        }
    }

    /// Whether `signature` is a valid signature of `message` under `publicKey`.
    static func verify(_ signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        precondition(initialized, "libsodium could not be initialised")
        guard signature.count == 64, publicKey.count == 32 else { return false }
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
    }

    private static func withSigningKey<R>(_ seed: SecretData, _ body: ([UInt8], [UInt8]) -> R) -> R {
        precondition(initialized, "libsodium could not be initialised")
        precondition(seed.count == 32, "an Ed25519 seed is 32 bytes")
        var secretKey = [UInt8](repeating: 0, count: 64)
        var publicKey = [UInt8](repeating: 0, count: 32)
        defer { SecretData.wipe(&secretKey) }
        seed.withUnsafeBytes { raw in
            _ = crypto_sign_seed_keypair(&publicKey, &secretKey, raw.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return body(secretKey, publicKey)
    }
}
