internal import CSodium

/// A keyed digest of a secret (BLAKE2b-256 with a 32-byte key, libsodium's
/// `crypto_generichash`): lets a program recognise a value it has seen before without
/// keeping the value. Without the key the digest says nothing about the value; whoever holds
/// the key can test guesses against it, so keep the key as private as the digests.
public enum SecretDigest {
    /// The key length in bytes.
    public static let keyLength = 32

    /// A fresh random key.
    public static func makeKey() -> SecretData {
        SecretData.random(count: keyLength)
    }

    /// The 32-byte digest of `value` under `key`.
    /// - Precondition: `key` is ``keyLength`` bytes long.
    public static func digest(of value: SecretData, key: SecretData) -> [UInt8] {
        precondition(key.count == keyLength, "a SecretDigest key is \(keyLength) bytes")
        Sodium.initialize()
        var digest = [UInt8](repeating: 0, count: 32)
        let result = value.withUnsafeBytes { bytes in
            key.withUnsafeBytes { keyBytes in
                crypto_generichash(
                    &digest, digest.count, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count),
                    keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), keyBytes.count)
            }
        }
        precondition(result == 0, "crypto_generichash cannot fail with these lengths")
        return digest
    }
}
