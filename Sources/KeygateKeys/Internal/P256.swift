internal import CCrypto
import Glibc
import KeygateItems
import KeygatePolicy

/// The libcrypto calls Keygate makes for P-256, with OpenSSL's types kept inside this file.
/// Private keys travel only as DER `ECPrivateKey` inside ``KeygateItems/SecretData``; every
/// temporary copy is wiped.
enum P256 {
    /// The DER SubjectPublicKeyInfo prefix of a P-256 key (id-ecPublicKey, prime256v1, a
    /// 66-byte bit string): the 65-byte point follows.
    static let subjectPublicKeyInfoPrefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48,
        0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ]

    /// The failure of `function`, with OpenSSL's first queued error as its cause (the queue
    /// emptied, so no later call reports it).
    static func failure(_ function: String, _ what: String) -> KeygateError {
        failure(function, .internalComponent, what)
    }

    /// The failure of `function` with `status`, OpenSSL's first queued error as its cause.
    static func failure(_ function: String, _ status: KeygateStatus, _ what: String) -> KeygateError {
        let code = UInt64(ERR_get_error())
        ERR_clear_error()
        return KeygateError(status, what, cause: .libcrypto(function: function, error: code))
    }

    /// A new random key: its DER `ECPrivateKey` and its X9.63 public point.
    static func generate() throws(KeygateError) -> (privateKey: SecretData, point: [UInt8]) {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw failure("EVP_PKEY_CTX_new_from_name", "cannot make a P-256 key")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
            EVP_PKEY_generate(context, &key) == 1, let key
        else { throw failure("EVP_PKEY_generate", "cannot make a P-256 key") }
        defer { EVP_PKEY_free(key) }
        return (try privateDER(key), try point(of: key))
    }

    /// The X9.63 public point of the private key `der`.
    /// - Throws: `errSecDecode` when `der` is not a P-256 private key.
    static func point(ofPrivate der: SecretData) throws(KeygateError) -> [UInt8] {
        try withPrivateKey(der) { (key) throws(KeygateError) in try point(of: key) }
    }

    /// The DER ECDSA signature of the 32-byte `digest` with the private key `der`.
    static func sign(digest: [UInt8], with der: SecretData) throws(KeygateError) -> [UInt8] {
        precondition(digest.count == 32)
        return try withSigningKey(der) { (key) throws(KeygateError) -> [UInt8] in
            guard let context = EVP_PKEY_CTX_new(key, nil) else {
                throw failure("EVP_PKEY_CTX_new", "cannot sign with the P-256 key")
            }
            defer { EVP_PKEY_CTX_free(context) }
            var length = 0
            guard EVP_PKEY_sign_init(context) == 1, EVP_PKEY_sign(context, nil, &length, digest, 32) == 1 else {
                throw failure("EVP_PKEY_sign", "cannot sign with the P-256 key")
            }
            var signature = [UInt8](repeating: 0, count: length)
            guard EVP_PKEY_sign(context, &signature, &length, digest, 32) == 1 else {
                throw failure("EVP_PKEY_sign", "cannot sign with the P-256 key")
            }
            return Array(signature.prefix(length))
        }
    }

    /// Whether `signature` (DER) is a valid ECDSA signature of `digest` under `point`.
    static func verify(_ signature: [UInt8], digest: [UInt8], point: [UInt8]) -> Bool {
        guard let key = publicKey(point) else {
            ERR_clear_error()
            return false
        }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_PKEY_CTX_new(key, nil) else { return false }
        defer { EVP_PKEY_CTX_free(context) }
        let verified =
            EVP_PKEY_verify_init(context) == 1
            && EVP_PKEY_verify(context, signature, signature.count, digest, digest.count) == 1
        ERR_clear_error()
        return verified
    }

    /// ECDH between the private key `der` and the public `point`: the 32-byte x-coordinate.
    static func sharedSecret(_ der: SecretData, _ point: [UInt8]) throws(KeygateError) -> SecretData {
        guard let peer = publicKey(point) else {
            throw failure("d2i_PUBKEY", .param, "the peer's P-256 public key is not a point on the curve")
        }
        defer { EVP_PKEY_free(peer) }
        return try withSigningKey(der) { (key) throws(KeygateError) -> SecretData in
            guard let context = EVP_PKEY_CTX_new(key, nil) else {
                throw failure("EVP_PKEY_CTX_new", "cannot derive with the P-256 key")
            }
            defer { EVP_PKEY_CTX_free(context) }
            var length = 0
            guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_derive_set_peer(context, peer) == 1,
                EVP_PKEY_derive(context, nil, &length) == 1, length == 32
            else { throw failure("EVP_PKEY_derive", "cannot derive with the P-256 key") }
            var secret = [UInt8](repeating: 0, count: 32)
            defer { SecretData.wipe(&secret) }
            guard EVP_PKEY_derive(context, &secret, &length) == 1, length == 32 else {
                throw failure("EVP_PKEY_derive", "cannot derive with the P-256 key")
            }
            return SecretData(bytes: secret)
        }
    }

    /// Checks that `point` is an uncompressed point on P-256.
    static func checkPoint(_ point: [UInt8]) throws(KeygateError) {
        guard let key = publicKey(point) else {
            throw failure("d2i_PUBKEY", .param, "the P-256 public key is not a point on the curve")
        }
        EVP_PKEY_free(key)
    }

    /// SHA-256 of `bytes`.
    static func sha256(_ bytes: [UInt8]) -> [UInt8] { digest(bytes, EVP_sha256(), 32) }

    /// SHA-1 of `bytes` (application labels only).
    static func sha1(_ bytes: [UInt8]) -> [UInt8] { digest(bytes, EVP_sha1(), 20) }

    private static func digest(_ bytes: [UInt8], _ type: OpaquePointer?, _ size: Int) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: size)
        var length: UInt32 = 0
        let done = EVP_Digest(bytes, bytes.count, &output, &length, type, nil)
        precondition(done == 1 && Int(length) == size, "libcrypto could not hash")
        return output
    }

    // MARK: - Keys in and out of OpenSSL

    /// The public key `point` names, or nil when it is not a point on the curve.
    private static func publicKey(_ point: [UInt8]) -> OpaquePointer? {
        guard point.count == 65, point[0] == 4 else { return nil }
        let info = subjectPublicKeyInfoPrefix + point
        return info.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
    }

    /// Runs `body` on the private key `der`, freed (and wiped by OpenSSL) after.
    private static func withPrivateKey<R>(
        _ der: SecretData, _ body: (OpaquePointer) throws(KeygateError) -> R
    ) throws(KeygateError) -> R {
        let key = der.withUnsafeBytes { raw -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = raw.baseAddress?.assumingMemoryBound(to: UInt8.self)
            return d2i_AutoPrivateKey(nil, &cursor, raw.count)
        }
        guard let key, EVP_PKEY_get_base_id(key) == NID_X9_62_id_ecPublicKey else {
            if let key { EVP_PKEY_free(key) }
            throw failure("d2i_AutoPrivateKey", .decode, "the key blob is not a P-256 private key")
        }
        defer { EVP_PKEY_free(key) }
        return try body(key)
    }

    /// Runs `body` on the private key `der` made from its scalar alone (`EVP_PKEY_fromdata`):
    /// fifteen times faster than decoding the DER through libcrypto's decoders, which a use of the
    /// key pays every time (it is kept nowhere between uses). Any other form of the blob takes
    /// the decoders' path.
    private static func withSigningKey<R>(
        _ der: SecretData, _ body: (OpaquePointer) throws(KeygateError) -> R
    ) throws(KeygateError) -> R {
        guard let parts = der.withUnsafeBytes({ partsOfECPrivateKey($0) }) else {
            return try withPrivateKey(der, body)
        }
        var scalar = parts.scalar
        defer { SecretData.wipe(&scalar) }
        guard let builder = OSSL_PARAM_BLD_new() else { throw failure("OSSL_PARAM_BLD_new", "cannot load the key") }
        defer { OSSL_PARAM_BLD_free(builder) }
        guard let number = BN_secure_new() ?? BN_new() else { throw failure("BN_new", "cannot load the key") }
        defer { BN_clear_free(number) }
        // The builder keeps pointers to what is pushed until it builds: the group name and the
        // point stay in these buffers until then (the parameter names are the shim's statics).
        let group = Array("prime256v1".utf8CString)
        let point = parts.point
        let built = group.withUnsafeBufferPointer { name in
            point.withUnsafeBufferPointer { bytes -> UnsafeMutablePointer<OSSL_PARAM>? in
                guard BN_bin2bn(scalar, Int32(scalar.count), number) != nil,
                    OSSL_PARAM_BLD_push_utf8_string(builder, keygate_param_group, name.baseAddress, 0) == 1,
                    OSSL_PARAM_BLD_push_BN(builder, keygate_param_private_key, number) == 1,
                    OSSL_PARAM_BLD_push_octet_string(builder, keygate_param_public_key, bytes.baseAddress, bytes.count)
                        == 1
                else { return nil }
                return OSSL_PARAM_BLD_to_param(builder)
            }
        }
        guard let parameters = built else {
            throw failure("OSSL_PARAM_BLD_to_param", .decode, "the key blob is not a P-256 private key")
        }
        defer { OSSL_PARAM_free(parameters) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw failure("EVP_PKEY_CTX_new_from_name", "cannot load the key")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata_init(context) == 1,
            EVP_PKEY_fromdata(context, &key, keygate_evp_pkey_keypair, parameters) == 1,
            let key
        else { throw failure("EVP_PKEY_fromdata", .decode, "the key blob is not a P-256 private key") }
        defer { EVP_PKEY_free(key) }
        return try body(key)
    }

    /// The 32-byte scalar and the 65-byte point of a DER `ECPrivateKey` (RFC 5915) of version 1
    /// naming prime256v1 with its public key (the form ``privateDER(_:)`` writes and import
    /// makes), or nil for anything else.
    static func partsOfECPrivateKey(_ der: UnsafeRawBufferPointer) -> (scalar: [UInt8], point: [UInt8])? {
        let prefix: [UInt8] = [0x30, 0x77, 0x02, 0x01, 0x01, 0x04, 0x20]
        let curve: [UInt8] = [0xa0, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07]
        let publicKey: [UInt8] = [0xa1, 0x44, 0x03, 0x42, 0x00, 0x04]
        guard der.count == 0x79, Array(der[0..<7]) == prefix, Array(der[39..<51]) == curve,
            Array(der[51..<57]) == publicKey
        else { return nil }
        return (Array(der[7..<39]), Array(der[56..<121]))
    }

    private static func privateDER(_ key: OpaquePointer) throws(KeygateError) -> SecretData {
        let length = i2d_PrivateKey(key, nil)
        guard length > 0 else { throw failure("i2d_PrivateKey", "cannot encode the P-256 key") }
        var der = [UInt8](repeating: 0, count: Int(length))
        defer { SecretData.wipe(&der) }
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_PrivateKey(key, &cursor)
        }
        guard written == length else { throw failure("i2d_PrivateKey", "cannot encode the P-256 key") }
        return SecretData(bytes: der)
    }

    private static func point(of key: OpaquePointer) throws(KeygateError) -> [UInt8] {
        var point = [UInt8](repeating: 0, count: 65)
        var length = 0
        guard EVP_PKEY_get_octet_string_param(key, "pub", &point, 65, &length) == 1, length == 65, point[0] == 4 else {
            throw failure("EVP_PKEY_get_octet_string_param", "cannot read the P-256 public key")
        }
        return point
    }
}
