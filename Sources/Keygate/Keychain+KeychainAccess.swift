public import KeygateItems
import KeygateKeys
public import KeygatePolicy

/// The embedded facade offers the operations both modes share.
extension Keychain: KeychainAccess {
    /// ``sign(_:algorithm:key:context:notes:)`` with no notes.
    public func sign(
        _ input: [UInt8], algorithm: SignatureAlgorithm, key query: KeyQuery, context: AuthenticationContext? = nil
    ) async throws(KeygateError) -> [UInt8] {
        try await sign(input, algorithm: algorithm, key: query, context: context, notes: [])
    }

    /// ``sharedSecret(with:key:context:)`` with the peer's public key as bytes of the key's type.
    /// - Throws: `errSecParam` when `peer` is no public key of the key's type.
    public func sharedSecret(withPeer peer: [UInt8], key query: KeyQuery, context: AuthenticationContext? = nil)
        async throws(KeygateError) -> SecretData
    {
        try await sharedSecret(with: try PublicKey(type: .p256, bytes: peer), key: query, context: context)
    }
}
