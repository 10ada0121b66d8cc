internal import CCrypto
import KeygatePolicy

/// Signature checks under public keys Keygate only verifies and never holds (an SSH server's
/// host key): the key as a DER SubjectPublicKeyInfo, the message hashed by libcrypto.
enum PublicKeyVerification {
    /// The digest a signature is made over.
    enum Digest {
        case sha256, sha384, sha512
    }

    /// Whether `signature` (DER for ECDSA, PKCS #1 v1.5 for RSA) is the key's signature of
    /// `message` with `digest`; false for a key libcrypto does not accept.
    static func verify(
        _ signature: [UInt8], of message: [UInt8], digest: Digest, subjectPublicKeyInfo info: [UInt8]
    ) -> Bool {
        defer { ERR_clear_error() }
        let key = info.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let key else { return false }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        let type =
            switch digest {
            case .sha256: EVP_sha256()
            case .sha384: EVP_sha384()
            case .sha512: EVP_sha512()
            }
        return EVP_DigestVerifyInit(context, nil, type, nil, key) == 1
            && EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
    }
}
