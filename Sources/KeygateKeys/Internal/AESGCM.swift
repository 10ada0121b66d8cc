internal import CCrypto
import KeygateItems
import KeygatePolicy

/// AES-128-GCM with a 16-byte IV and a 16-byte tag (the IV length Apple's ECIES uses, spec
/// 9.9.8), through libcrypto's EVP interface; no associated data.
enum AESGCM {
    /// Encrypts: the ciphertext (as long as the plaintext) and the tag.
    static func seal(_ plaintext: SecretData, key: [UInt8], iv: [UInt8]) throws(KeygateError) -> (
        ciphertext: [UInt8], tag: [UInt8]
    ) {
        guard let context = EVP_CIPHER_CTX_new() else { throw P256.failure("EVP_CIPHER_CTX_new", "cannot encrypt") }
        defer { EVP_CIPHER_CTX_free(context) }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count)
        var tag = [UInt8](repeating: 0, count: 16)
        var written: Int32 = 0
        let ok = plaintext.withUnsafeBytes { message -> Bool in
            guard EVP_EncryptInit_ex(context, EVP_aes_128_gcm(), nil, nil, nil) == 1,
                EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(iv.count), nil) == 1,
                EVP_EncryptInit_ex(context, nil, nil, key, iv) == 1
            else { return false }
            if message.count > 0 {
                guard
                    EVP_EncryptUpdate(
                        context, &ciphertext, &written, message.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        Int32(message.count)) == 1
                else { return false }
            }
            // GCM is a stream mode: the final call writes nothing (a scratch block to be safe).
            var final: Int32 = 0
            var scratch = [UInt8](repeating: 0, count: 16)
            return EVP_EncryptFinal_ex(context, &scratch, &final) == 1 && final == 0
                && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, &tag) == 1
        }
        guard ok else { throw P256.failure("EVP_EncryptFinal_ex", "cannot encrypt with AES-GCM") }
        return (ciphertext, tag)
    }

    /// Decrypts and checks the tag.
    /// - Throws: `errSecParam` ("Failed to aes-gcm decrypt data", spec 9.8.2) when the tag does
    ///   not verify; nothing of the plaintext is returned then.
    static func open(_ ciphertext: ArraySlice<UInt8>, tag: [UInt8], key: [UInt8], iv: [UInt8]) throws(KeygateError)
        -> SecretData
    {
        guard let context = EVP_CIPHER_CTX_new() else { throw P256.failure("EVP_CIPHER_CTX_new", "cannot decrypt") }
        defer { EVP_CIPHER_CTX_free(context) }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count)
        defer { SecretData.wipe(&plaintext) }
        var tag = tag
        var written: Int32 = 0
        var final: Int32 = 0
        let input = Array(ciphertext)
        guard EVP_DecryptInit_ex(context, EVP_aes_128_gcm(), nil, nil, nil) == 1,
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(iv.count), nil) == 1,
            EVP_DecryptInit_ex(context, nil, nil, key, iv) == 1,
            input.isEmpty || EVP_DecryptUpdate(context, &plaintext, &written, input, Int32(input.count)) == 1,
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, 16, &tag) == 1
        else { throw P256.failure("EVP_DecryptInit_ex", .param, "Failed to aes-gcm decrypt data") }
        var scratch = [UInt8](repeating: 0, count: 16)
        guard EVP_DecryptFinal_ex(context, &scratch, &final) == 1, final == 0 else {
            throw P256.failure("EVP_DecryptFinal_ex", .param, "Failed to aes-gcm decrypt data")
        }
        return SecretData(bytes: plaintext[0..<Int(written)])
    }
}
