public import KeygateItems
public import KeygatePolicy

/// Key items through the daemon: not yet in the broker's protocol, so every key call is
/// `errSecUnimplemented` and nothing is sent; the embedded keychain serves them.
extension KeygateClient {
    private static var notServed: KeygateError {
        KeygateError(.unimplemented, "keygated does not serve key items in this version: use --embedded")
    }

    /// Not served by the daemon yet: `errSecUnimplemented`.
    public func createKey(_ request: NewKeyRequest, context: AuthenticationContext?) async throws(KeygateError)
        -> KeyFields
    {
        throw Self.notServed
    }

    /// Not served by the daemon yet: `errSecUnimplemented`.
    public func importKey(_ request: NewKeyRequest, privateKey: SecretData, context: AuthenticationContext?)
        async throws(KeygateError) -> KeyFields
    {
        throw Self.notServed
    }

    /// Not served by the daemon yet: `errSecUnimplemented`.
    public func keys(matching query: KeyQuery) async throws(KeygateError) -> [KeyFields] { throw Self.notServed }

    /// Not served by the daemon yet: `errSecUnimplemented`.
    public func updateKeys(_ query: KeyQuery, changes: KeyChanges) async throws(KeygateError) { throw Self.notServed }

    /// Not served by the daemon yet: `errSecUnimplemented`.
    public func deleteKeys(_ query: KeyQuery) async throws(KeygateError) { throw Self.notServed }

    /// Not served by the daemon yet: `errSecUnimplemented`.
    public func sign(
        _ input: [UInt8], algorithm: SignatureAlgorithm, key query: KeyQuery, context: AuthenticationContext?
    ) async throws(KeygateError) -> [UInt8] {
        throw Self.notServed
    }

    /// Not served by the daemon yet: `errSecUnimplemented`.
    public func sharedSecret(withPeer peer: [UInt8], key query: KeyQuery, context: AuthenticationContext?)
        async throws(KeygateError) -> SecretData
    {
        throw Self.notServed
    }
}
