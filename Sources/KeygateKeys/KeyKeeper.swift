public import KeygateItems
public import KeygatePolicy

/// What a keeper hands back for a key it made: the blob that names the key to the keeper again
/// (Apple's token object id, `kSecAttrTokenOID`) and the public key. For the software keeper
/// the blob is the private key itself, so whoever stores it must seal it (the store does);
/// for a hardware keeper it is a wrapped blob only that hardware can use.
public struct KeptKey: Sendable {
    /// The keeper's handle on the private key; secret for the software keeper.
    public let blob: SecretData
    /// The public half.
    public let publicKey: PublicKey

    /// A kept key.
    public init(blob: SecretData, publicKey: PublicKey) {
        self.blob = blob
        self.publicKey = publicKey
    }
}

/// Holds private keys and uses them without ever handing them out: the Secure Enclave's role
/// (spec §9). A keeper decides nothing: the keychain gates each use against the key's access
/// control before it asks the keeper.
///
/// Duties of every conforming type: ``generate(_:)`` makes a fresh random key inside the keeper;
/// the blob it returns works only with this keeper (another keeper's blob, or a damaged one,
/// is `errSecDecode`, never a use of some other key); no method returns private key material
/// other than inside the blob; an algorithm the key's type cannot do is `errSecParam`
/// ("algorithm not supported by the key", §9.8.2); errors never carry key or input bytes.
public protocol KeyKeeper: Sendable {
    /// The keeper's token id (`kSecAttrTokenID`), stored with every key it made.
    var tokenID: String { get }
    /// Makes a new random key of `type`.
    func generate(_ type: KeyType) throws(KeygateError) -> KeptKey
    /// The public key of the key `blob` names, checked against the keeper.
    func publicKey(of blob: SecretData, type: KeyType) throws(KeygateError) -> PublicKey
    /// Signs `input` (the message, or the digest for a digest algorithm) with the key `blob` names.
    func sign(_ input: [UInt8], algorithm: SignatureAlgorithm, with blob: SecretData, type: KeyType)
        throws(KeygateError) -> [UInt8]
    /// ECDH: the raw shared x-coordinate (32 bytes for P-256, spec §9.9.6) of the key `blob`
    /// names and `peer`.
    func sharedSecret(with peer: PublicKey, using blob: SecretData, type: KeyType) throws(KeygateError) -> SecretData
}
