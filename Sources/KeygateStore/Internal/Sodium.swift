internal import CSodium
import KeygatePolicy

/// The libsodium calls Keygate makes, with its C types kept inside this file.
enum Sodium {
    static let keyLength = Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES)
    static let nonceLength = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    static let tagLength = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)

    private static let initialized: Bool = sodium_init() >= 0

    /// Initialises libsodium once; traps if it cannot (no secure randomness: nothing is safe).
    static func initialize() {
        precondition(initialized, "libsodium could not be initialised")
    }

    /// Random bytes.
    static func random(_ count: Int) -> [UInt8] {
        initialize()
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) }
        return bytes
    }

    /// XChaCha20-Poly1305 with a fresh random nonce: (nonce, ciphertext with tag).
    /// - Throws: `errSecInternalComponent` with the libsodium failure as its cause (the message is
    ///   longer than libsodium's limit, which the stores' value limit rules out).
    static func seal(_ plaintext: SecretData, key: SecretData, associatedData: [UInt8]) throws(KeygateError) -> (
        nonce: [UInt8], ciphertext: [UInt8]
    ) {
        initialize()
        precondition(key.count == keyLength, "wrong key length")
        let nonce = random(nonceLength)
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + tagLength)
        var written: UInt64 = 0
        let result = plaintext.withUnsafeBytes { message in
            key.withUnsafeBytes { keyBytes in
                crypto_aead_xchacha20poly1305_ietf_encrypt(
                    &ciphertext, &written, message.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    UInt64(message.count), associatedData, UInt64(associatedData.count), nil, nonce,
                    keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        guard result == 0, Int(written) == ciphertext.count else {
            throw KeygateError(
                .internalComponent, "libsodium could not seal a value of \(plaintext.count) bytes",
                cause: .sodium(function: "crypto_aead_xchacha20poly1305_ietf_encrypt", result: result))
        }
        return (nonce, ciphertext)
    }

    /// Opens a sealed box.
    /// - Throws: `errSecDecode` when the tag does not verify (tampered, wrong key or wrong data) or
    ///   the box is malformed, with the libsodium failure as its cause; callers say which item.
    static func open(
        _ ciphertext: [UInt8], nonce: [UInt8], key: SecretData, associatedData: [UInt8]
    ) throws(KeygateError) -> SecretData {
        initialize()
        var result: Int32 = -1
        if nonce.count == nonceLength, ciphertext.count >= tagLength, key.count == keyLength {
            let plaintext = SecretData(count: ciphertext.count - tagLength) { output in
                var written: UInt64 = 0
                result = key.withUnsafeBytes { keyBytes in
                    crypto_aead_xchacha20poly1305_ietf_decrypt(
                        output.baseAddress?.assumingMemoryBound(to: UInt8.self), &written, nil, ciphertext,
                        UInt64(ciphertext.count), associatedData, UInt64(associatedData.count), nonce,
                        keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
                if result == 0 && Int(written) != output.count { result = -1 }
            }
            if result == 0 { return plaintext }
        }
        throw KeygateError(
            .decode, "a sealed value does not open",
            cause: .sodium(function: "crypto_aead_xchacha20poly1305_ietf_decrypt", result: result))
    }

    /// Argon2id key derivation (`crypto_pwhash`), with libsodium's "moderate" limits unless given.
    static func deriveKey(
        from passphrase: SecretData, salt: [UInt8], operations: UInt64, memory: Int
    ) throws(KeygateError) -> SecretData {
        initialize()
        guard salt.count == Int(crypto_pwhash_saltbytes()) else { throw KeygateError(.decode, "bad salt length") }
        var status: Int32 = -1
        let empty: [CChar] = [0]
        let key = SecretData(keyCount: keyLength) { output in
            status = passphrase.withUnsafeBytes { secret in
                empty.withUnsafeBufferPointer { fallback in
                    crypto_pwhash(
                        output.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(output.count),
                        secret.baseAddress?.assumingMemoryBound(to: CChar.self) ?? fallback.baseAddress!,
                        UInt64(secret.count), salt, operations, memory, crypto_pwhash_alg_argon2id13())
                }
            }
        }
        guard status == 0 else {
            throw KeygateError(
                .allocate, "Argon2id key derivation failed (out of memory)",
                cause: .sodium(function: "crypto_pwhash", result: status))
        }
        return key
    }

    static var saltLength: Int { Int(crypto_pwhash_saltbytes()) }
    static var moderateOperations: UInt64 { UInt64(crypto_pwhash_opslimit_moderate()) }
    static var moderateMemory: Int { Int(crypto_pwhash_memlimit_moderate()) }
    static var minimumOperations: UInt64 { UInt64(crypto_pwhash_opslimit_min()) }
    static var minimumMemory: Int { Int(crypto_pwhash_memlimit_min()) }
}
