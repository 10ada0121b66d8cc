public import KeygateItems
public import KeygatePolicy

/// ECIES as Apple's `SecKeyCreateEncryptedData` / `…DecryptedData` lay it out (spec §9.9.8):
/// `ephemeral point (65) ‖ AES-GCM ciphertext (as long as the plaintext) ‖ tag (16)`. The
/// private key's part is the ECDH step alone (the keeper's, gated as `ock`); the KDF and
/// AES-GCM run here, as Apple runs them in the calling process (9.6).
public enum ECIES {
    /// Encrypts `plaintext` to `recipient` (needs only the public key, 9.9.9).
    /// - Throws: `errSecParam` for a key that is not P-256.
    public static func seal(_ plaintext: SecretData, to recipient: PublicKey, algorithm: ECIESAlgorithm)
        throws(KeygateError) -> [UInt8]
    {
        guard recipient.type == .p256 else { throw KeygateError(.param, "ECIES needs a P-256 key") }
        let keeper = SoftwareKeyKeeper()
        let ephemeral = try keeper.generate(.p256)
        let shared = try keeper.sharedSecret(with: recipient, using: ephemeral.blob, type: .p256)
        let (key, iv) = derive(shared, ephemeral: ephemeral.publicKey.bytes, algorithm: algorithm)
        let (ciphertext, tag) = try AESGCM.seal(plaintext, key: key, iv: iv)
        return ephemeral.publicKey.bytes + ciphertext + tag
    }

    /// Decrypts `message`, asking `agree` for the ECDH secret of the recipient's private key and
    /// the message's ephemeral point.
    /// - Throws: `errSecParam` "too small input packet" for a message shorter than a point and a
    ///   tag, or whose point is not on the curve; "Failed to aes-gcm decrypt data" when the tag
    ///   does not verify (spec 9.8.2); whatever `agree` throws.
    public static func open(
        _ message: [UInt8], algorithm: ECIESAlgorithm,
        agree: (PublicKey) async throws(KeygateError) -> SecretData
    ) async throws(KeygateError) -> SecretData {
        guard message.count >= 65 + 16 else {
            throw KeygateError(.param, "too small input packet: \(message.count) bytes, less than a point and a tag")
        }
        let point = Array(message[0..<65])
        let ephemeral: PublicKey
        do {
            ephemeral = try PublicKey(type: .p256, bytes: point)
        } catch {
            throw KeygateError(
                .param, "too small input packet: its ephemeral key is no P-256 point", cause: error.cause)
        }
        let shared = try await agree(ephemeral)
        var (key, iv) = derive(shared, ephemeral: point, algorithm: algorithm)
        defer { SecretData.wipe(&key) }
        return try AESGCM.open(
            message[65..<(message.count - 16)], tag: Array(message[(message.count - 16)...]), key: key, iv: iv)
    }

    /// The AES key and IV: the X9.63 KDF with SHA-256 of the shared secret, the ephemeral point
    /// as shared info; 32 bytes (key ‖ IV) for the variable-IV forms, else 16 and a zero IV.
    static func derive(_ shared: SecretData, ephemeral: [UInt8], algorithm: ECIESAlgorithm) -> (
        key: [UInt8], iv: [UInt8]
    ) {
        var output = x963KDF(shared, sharedInfo: ephemeral, length: algorithm.variableIV ? 32 : 16)
        defer { SecretData.wipe(&output) }
        let key = Array(output[0..<16])
        let iv = algorithm.variableIV ? Array(output[16..<32]) : [UInt8](repeating: 0, count: 16)
        return (key, iv)
    }

    /// ANSI X9.63 KDF with SHA-256: `SHA256(Z ‖ counter ‖ sharedInfo)` for counter 1, 2, …
    /// (big-endian 32 bits), concatenated and cut to `length` bytes.
    static func x963KDF(_ shared: SecretData, sharedInfo: [UInt8], length: Int) -> [UInt8] {
        var output: [UInt8] = []
        var counter: UInt32 = 1
        while output.count < length {
            var input = shared.withUnsafeBytes { Array($0) }
            input += [
                UInt8(counter >> 24), UInt8(counter >> 16 & 0xff), UInt8(counter >> 8 & 0xff), UInt8(counter & 0xff),
            ]
            input += sharedInfo
            output += P256.sha256(input)
            SecretData.wipe(&input)
            counter += 1
        }
        return Array(output.prefix(length))
    }
}
