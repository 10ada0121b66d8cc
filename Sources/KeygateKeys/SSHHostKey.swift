public import KeygatePolicy

/// An SSH server's host key as OpenSSH names it to an agent (`session-bind@openssh.com`), only
/// ever used to check the server's signature: Ed25519, ECDSA on P-256, P-384 or P-521 (RFC 5656),
/// and RSA of 1024 to 16384 bits signing with SHA-256 or SHA-512 (RFC 8332; the SHA-1
/// `ssh-rsa` signature is refused, as OpenSSH refuses it by default).
public struct SSHHostKey: Sendable {
    /// The key's type as OpenSSH names it (`ssh-ed25519`, `ecdsa-sha2-nistp384`, `ssh-rsa`).
    public let openSSHType: String
    private let kind: Kind

    private enum Kind: Sendable {
        case ed25519(PublicKey)
        case ecdsa(curve: Curve, point: [UInt8])
        case rsa(subjectPublicKeyInfo: [UInt8])
    }

    private struct Curve: Sendable {
        let name: String
        let coordinateSize: Int
        let objectIdentifier: [UInt8]
        let digest: PublicKeyVerification.Digest

        static let all = [
            Curve(
                name: "nistp256", coordinateSize: 32,
                objectIdentifier: [0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07], digest: .sha256),
            Curve(
                name: "nistp384", coordinateSize: 48, objectIdentifier: [0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22],
                digest: .sha384),
            Curve(
                name: "nistp521", coordinateSize: 66, objectIdentifier: [0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x23],
                digest: .sha512),
        ]
    }

    private static let ecPublicKey: [UInt8] = [0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01]
    private static let rsaEncryption: [UInt8] = [0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01]

    /// The host key in `blob` (its OpenSSH wire form).
    /// - Throws: `errSecParam` naming what is malformed (a cut-short field, a curve that is not
    ///   the type's, a point of the wrong size, an RSA modulus out of range, bytes left over);
    ///   `errSecUnimplemented` for another key type (certificates, security keys).
    public init(openSSHBlob blob: [UInt8]) throws(KeygateError) {
        var reader = SSHWireReader(blob)
        let name = try reader.string("the host key's type")
        openSSHType = name
        switch name {
        case "ssh-ed25519":
            kind = .ed25519(try PublicKey(openSSHBlob: blob))
            return
        case "ssh-rsa":
            let exponent = try reader.mpint("the RSA exponent")
            let modulus = try reader.mpint("the RSA modulus")
            let bits = modulus.count * 8 - (modulus.first.map { $0.leadingZeroBitCount } ?? 8)
            guard (1024...16384).contains(bits) else {
                throw KeygateError(.param, "an RSA host key of \(bits) bits (1024 to 16384 are checked)")
            }
            guard !exponent.isEmpty, exponent.count <= 8 else {
                throw KeygateError(.param, "an RSA host key's exponent is 1 to 8 bytes")
            }
            kind = .rsa(
                subjectPublicKeyInfo: DER.sequence(
                    DER.sequence(Self.rsaEncryption, DER.null),
                    DER.bitString(DER.sequence(DER.integer(modulus), DER.integer(exponent)))))
        default:
            guard name.hasPrefix("ecdsa-sha2-"), let curve = Curve.all.first(where: { "ecdsa-sha2-" + $0.name == name })
            else { throw KeygateError(.unimplemented, "host keys of type '\(name)' are not checked here") }
            guard try reader.string("the host key's curve") == curve.name else {
                throw KeygateError(.param, "an \(name) host key names another curve")
            }
            let point = try reader.bytes("the host key's point")
            guard point.count == 1 + 2 * curve.coordinateSize, point.first == 4 else {
                throw KeygateError(.param, "an \(name) host key's point is not an uncompressed point of its curve")
            }
            kind = .ecdsa(curve: curve, point: point)
        }
        guard reader.isAtEnd else { throw KeygateError(.param, "bytes after the host key") }
    }

    /// Whether `signatureBlob` (OpenSSH's `string type, string signature`) is this key's
    /// signature of `message`: its type must be the key's (for RSA, `rsa-sha2-256` or
    /// `rsa-sha2-512`), and it must verify.
    /// - Throws: `errSecParam` for a malformed blob; `errSecUnimplemented` for a SHA-1
    ///   `ssh-rsa` signature.
    public func isValidSignature(_ signatureBlob: [UInt8], of message: [UInt8]) throws(KeygateError) -> Bool {
        if case .ed25519(let key) = kind {
            return try SSHSignature(blob: signatureBlob).isValid(for: message, by: key)
        }
        var reader = SSHWireReader(signatureBlob)
        let name = try reader.string("the signature's type")
        let body = try reader.bytes("the signature")
        guard reader.isAtEnd else { throw KeygateError(.param, "bytes after the signature") }
        switch kind {
        case .ed25519:
            return false
        case .ecdsa(let curve, let point):
            guard name == openSSHType else { return false }
            var inner = SSHWireReader(body)
            let r = try inner.mpint("the signature's r")
            let s = try inner.mpint("the signature's s")
            guard inner.isAtEnd, r.count <= curve.coordinateSize, s.count <= curve.coordinateSize else {
                throw KeygateError(.param, "an ECDSA signature's r and s are two mpints no longer than the curve")
            }
            let info = DER.sequence(DER.sequence(Self.ecPublicKey, curve.objectIdentifier), DER.bitString(point))
            return PublicKeyVerification.verify(
                DER.sequence(DER.integer(r), DER.integer(s)), of: message, digest: curve.digest,
                subjectPublicKeyInfo: info)
        case .rsa(let info):
            let digest: PublicKeyVerification.Digest
            switch name {
            case "rsa-sha2-256": digest = .sha256
            case "rsa-sha2-512": digest = .sha512
            case "ssh-rsa": throw KeygateError(.unimplemented, "an RSA signature with SHA-1 (ssh-rsa) is not accepted")
            default: return false
            }
            return PublicKeyVerification.verify(body, of: message, digest: digest, subjectPublicKeyInfo: info)
        }
    }
}
