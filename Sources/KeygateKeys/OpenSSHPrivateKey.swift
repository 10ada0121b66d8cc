import FoundationEssentials
public import KeygateItems
public import KeygatePolicy

/// An unencrypted OpenSSH private key file (`-----BEGIN OPENSSH PRIVATE KEY-----`, OpenSSH's
/// PROTOCOL.key) of a type the keeper holds, read for `keygate key import`: the private part as
/// the software keeper takes it (``SoftwareKeyKeeper/adopt(_:type:)``), checked against the
/// public key the file names.
public struct OpenSSHPrivateKey: Sendable {
    /// The key's type.
    public let type: KeyType
    /// The private part: the 32-byte seed for Ed25519, a DER `ECPrivateKey` for P-256.
    public let material: SecretData
    /// The public key the file names.
    public let publicKey: PublicKey
    /// The file's comment.
    public let comment: String

    /// Reads `file`.
    /// - Throws: `errSecParam` naming what is wrong: not an OpenSSH private key, encrypted with a
    ///   passphrase (decrypt a copy first: `ssh-keygen -p -N '' -f COPY`), more than one key,
    ///   a malformed field, a private part that does not match its public key;
    ///   `errSecUnimplemented` for a type the keeper does not hold (RSA, other curves).
    public init(file: SecretData) throws(KeygateError) {
        var decoded = try Self.armoured(file)
        defer { SecretData.wipe(&decoded) }
        let magic = Array("openssh-key-v1".utf8) + [0]
        guard decoded.starts(with: magic) else { throw Self.malformed("it does not begin with openssh-key-v1") }
        var reader = SSHWireReader(Array(decoded.dropFirst(magic.count)))
        let cipher = try reader.string("the cipher name")
        let kdf = try reader.string("the KDF name")
        _ = try reader.bytes("the KDF options")
        guard cipher == "none", kdf == "none" else {
            throw KeygateError(
                .param,
                "the private key is encrypted with a passphrase (\(cipher), \(kdf)): decrypt a copy first "
                    + "(ssh-keygen -p -N '' -f COPY) and import that")
        }
        guard try reader.uint32("the number of keys") == 1 else { throw Self.malformed("it holds more than one key") }
        let publicBlob = try reader.bytes("the public key")
        var section = try reader.bytes("the private section")
        defer { SecretData.wipe(&section) }
        guard reader.isAtEnd else { throw Self.malformed("bytes follow the private section") }
        var inner = SSHWireReader(section)
        guard try inner.uint32("the first check number") == inner.uint32("the second check number") else {
            throw Self.malformed("its check numbers differ (a wrong passphrase, or a damaged file)")
        }
        let named = try PublicKey(openSSHBlob: publicBlob)
        let typeName = try inner.string("the private key's type")
        guard typeName == named.openSSHType else { throw Self.malformed("its private and public parts differ in type") }
        switch named.type {
        case .ed25519:
            let point = try inner.bytes("the Ed25519 public key")
            var secret = try inner.bytes("the Ed25519 private key")
            defer { SecretData.wipe(&secret) }
            guard point == named.bytes, secret.count == 64, Array(secret[32...]) == named.bytes else {
                throw Self.malformed("its Ed25519 private part does not match its public key")
            }
            material = SecretData(bytes: secret[0..<32])
        case .p256:
            guard try inner.string("the curve") == "nistp256" else { throw Self.malformed("its curve is not nistp256") }
            guard try inner.bytes("the P-256 point") == named.bytes else {
                throw Self.malformed("its P-256 private part names another point")
            }
            var scalar = try inner.bytes("the P-256 private scalar")
            defer { SecretData.wipe(&scalar) }
            let magnitude = Array(scalar.drop { $0 == 0 })
            guard magnitude.count <= 32 else { throw Self.malformed("its P-256 scalar is longer than 32 bytes") }
            // DER ECPrivateKey (RFC 5915) with the file's point; the keeper then checks that the
            // point is the scalar's (``SoftwareKeyKeeper/adopt(_:type:)``).
            var der: [UInt8] = [0x30, 0x77, 0x02, 0x01, 0x01, 0x04, 0x20]
            der += [UInt8](repeating: 0, count: 32 - magnitude.count) + magnitude
            der += [0xa0, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07]
            der += [0xa1, 0x44, 0x03, 0x42, 0x00] + named.bytes
            material = SecretData(bytes: der)
            SecretData.wipe(&der)
        }
        type = named.type
        publicKey = named
        comment = try inner.string("the comment")
    }

    /// The base64 between the armour lines, decoded (lines compared without their spaces).
    private static func armoured(_ file: SecretData) throws(KeygateError) -> [UInt8] {
        let text = file.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        let lines = text.split(whereSeparator: \.isNewline).map { String($0.filter { !$0.isWhitespace }) }
        guard let begin = lines.firstIndex(of: "-----BEGINOPENSSHPRIVATEKEY-----"),
            let end = lines.firstIndex(of: "-----ENDOPENSSHPRIVATEKEY-----"), begin < end
        else { throw malformed("it has no BEGIN and END OPENSSH PRIVATE KEY lines") }
        guard let data = Data(base64Encoded: lines[(begin + 1)..<end].joined()) else {
            throw malformed("its body is not base64")
        }
        return [UInt8](data)
    }

    private static func malformed(_ why: String) -> KeygateError {
        KeygateError(.param, "not an OpenSSH private key the keeper can import: \(why)")
    }
}
