import FoundationEssentials
public import KeygateItems
public import KeygatePolicy

/// An SSH signature blob (RFC 5656 §3.1.2, RFC 8709 §6): `string type, string signature`,
/// where an ECDSA signature is `mpint r, mpint s` and an Ed25519 one the 64 raw bytes.
public struct SSHSignature: Hashable, Sendable {
    /// The key type that made it: P-256 or Ed25519.
    public let type: KeyType
    /// The signature as the keeper gives it: DER X9.62 for P-256, 64 bytes for Ed25519.
    public let keeperForm: [UInt8]

    /// The signature a keeper made with a key of `type`.
    public init(type: KeyType, keeperForm: [UInt8]) {
        self.type = type
        self.keeperForm = keeperForm
    }

    /// Reads a signature blob.
    /// - Throws: `errSecParam` naming what is wrong: a cut-short field, an unknown type (RSA
    ///   and others are `errSecUnimplemented`), bytes left over.
    public init(blob: [UInt8]) throws(KeygateError) {
        var reader = SSHWireReader(blob)
        let name = try reader.string("the signature's type")
        let body = try reader.bytes("the signature")
        guard reader.isAtEnd else { throw KeygateError(.param, "bytes after the signature") }
        switch name {
        case "ecdsa-sha2-nistp256":
            var inner = SSHWireReader(body)
            let r = try inner.mpint("the signature's r")
            let s = try inner.mpint("the signature's s")
            guard inner.isAtEnd, r.count <= 32, s.count <= 32 else {
                throw KeygateError(.param, "an ECDSA signature's r and s are two mpints of at most 32 bytes")
            }
            let padded = [UInt8](repeating: 0, count: 32 - r.count) + r + [UInt8](repeating: 0, count: 32 - s.count) + s
            self.init(type: .p256, keeperForm: try ECDSASignature(rawRepresentation: padded).derRepresentation)
        case "ssh-ed25519":
            guard body.count == 64 else { throw KeygateError(.param, "an Ed25519 signature is 64 bytes") }
            self.init(type: .ed25519, keeperForm: body)
        default:
            throw KeygateError(.unimplemented, "signatures of type '\(name)' are not checked here")
        }
    }

    /// The algorithm that makes and checks it: SHA-256 ECDSA over the message, or Ed25519.
    public var algorithm: SignatureAlgorithm {
        type == .p256 ? .ecdsaSignatureMessageX962SHA256 : .ed25519
    }

    /// The blob.
    /// - Throws: `errSecParam` when an ECDSA signature is not DER.
    public func blob() throws(KeygateError) -> [UInt8] {
        var writer = SSHWireWriter()
        switch type {
        case .p256:
            writer.string("ecdsa-sha2-nistp256")
            let signature = try ECDSASignature(der: keeperForm)
            var inner = SSHWireWriter()
            inner.mpint(signature.r)
            inner.mpint(signature.s)
            writer.bytes(inner.output)
        case .ed25519:
            writer.string("ssh-ed25519")
            writer.bytes(keeperForm)
        }
        return writer.output
    }

    /// Whether it is `key`'s signature of `message`.
    public func isValid(for message: [UInt8], by key: PublicKey) -> Bool {
        key.type == type && key.isValidSignature(keeperForm, for: message, algorithm: algorithm)
    }

}

extension PublicKey {
    /// A public key from its OpenSSH blob (``openSSHBlob``).
    /// - Throws: `errSecUnimplemented` naming the type for a type this keeper does not make
    ///   (RSA, other curves); `errSecParam` for a malformed blob.
    public init(openSSHBlob blob: [UInt8]) throws(KeygateError) {
        var reader = SSHWireReader(blob)
        let name = try reader.string("the key's type")
        switch name {
        case "ecdsa-sha2-nistp256":
            guard try reader.string("the key's curve") == "nistp256" else {
                throw KeygateError(.param, "an ecdsa-sha2-nistp256 key names another curve")
            }
            let point = try reader.bytes("the key's point")
            guard reader.isAtEnd else { throw KeygateError(.param, "bytes after the key") }
            try self.init(type: .p256, bytes: point)
        case "ssh-ed25519":
            let bytes = try reader.bytes("the key")
            guard reader.isAtEnd else { throw KeygateError(.param, "bytes after the key") }
            try self.init(type: .ed25519, bytes: bytes)
        default:
            throw KeygateError(.unimplemented, "keys of type '\(name)' are not used here")
        }
    }

    /// OpenSSH's fingerprint of a key blob: `SHA256:` and the unpadded base64 of its SHA-256,
    /// as `ssh-keygen -l` prints it. Any key type's blob has one.
    public static func fingerprint(ofOpenSSHBlob blob: [UInt8]) -> String {
        let base64 = Data(P256.sha256(blob)).base64EncodedString()
        return "SHA256:" + String(base64.prefix { $0 != "=" })
    }
}
