public import KeygateItems
public import KeygatePolicy
import KeygateProtocol

/// Key items through the daemon: the keeper is `keygated`'s, so a private half never reaches
/// this process; what comes back is attributes, public halves, signatures and shared secrets.
/// Of a `context`, the reuse window and the interaction policy are sent, as for items.
extension KeygateClient {
    /// Makes a key in the daemon's keeper, as `Keychain.createKey(_:context:)` does embedded.
    public func createKey(_ request: NewKeyRequest, context: AuthenticationContext? = nil) async throws(KeygateError)
        -> KeyFields
    {
        try await oneKey(.createKey(request, privateKey: nil))
    }

    /// Hands the daemon's keeper a private key made elsewhere; the bytes travel once, over the
    /// daemon's socket, and are kept only there.
    public func importKey(_ request: NewKeyRequest, privateKey: SecretData, context: AuthenticationContext? = nil)
        async throws(KeygateError) -> KeyFields
    {
        try await oneKey(.createKey(request, privateKey: privateKey))
    }

    private func oneKey(_ request: Message) async throws(KeygateError) -> KeyFields {
        let reply = try await perform(request, reason: nil)
        guard case .keys(let keys) = reply, keys.count == 1 else { throw unexpected(reply) }
        return keys[0]
    }

    /// The keys matching `query`, attributes only (never a proof, spec 9.3.4).
    public func keys(matching query: KeyQuery) async throws(KeygateError) -> [KeyFields] {
        let reply = try await perform(.findKeys(query), reason: nil)
        guard case .keys(let keys) = reply else { throw unexpected(reply) }
        return keys
    }

    /// Changes keys' labels or tags (never a proof, spec 9.6).
    public func updateKeys(_ query: KeyQuery, changes: KeyChanges) async throws(KeygateError) {
        try await expectDone(.updateKeys(query, changes), reason: nil)
    }

    /// Deletes keys (never a proof, spec 9.6).
    public func deleteKeys(_ query: KeyQuery) async throws(KeygateError) {
        try await expectDone(.deleteKeys(query), reason: nil)
    }

    /// Signs in the daemon with the one key matching `query`, once its access control allows.
    public func sign(
        _ input: [UInt8], algorithm: SignatureAlgorithm, key query: KeyQuery, context: AuthenticationContext? = nil
    ) async throws(KeygateError) -> [UInt8] {
        let reply = try await perform(
            .sign(
                input: input, algorithm: algorithm, key: Self.merge(query, context), reuseSeconds: Self.window(context)),
            reason: query.operationPrompt)
        guard case .signature(let signature) = reply else { throw unexpected(reply) }
        return signature
    }

    /// ECDH in the daemon with the one key matching `query` and `peer`.
    public func sharedSecret(withPeer peer: [UInt8], key query: KeyQuery, context: AuthenticationContext? = nil)
        async throws(KeygateError) -> SecretData
    {
        let reply = try await perform(
            .keyAgreement(peer: peer, key: Self.merge(query, context), reuseSeconds: Self.window(context)),
            reason: query.operationPrompt)
        guard case .sharedSecret(let secret) = reply else { throw unexpected(reply) }
        return secret
    }

    /// Decrypts an ECIES message in the daemon with the one key matching `query`.
    public func decrypt(
        _ message: [UInt8], algorithm: ECIESAlgorithm, key query: KeyQuery, context: AuthenticationContext? = nil
    ) async throws(KeygateError) -> SecretData {
        let reply = try await perform(
            .decrypt(
                message: message, algorithm: algorithm, key: Self.merge(query, context),
                reuseSeconds: Self.window(context)), reason: query.operationPrompt)
        guard case .plaintext(let plaintext) = reply else { throw unexpected(reply) }
        return plaintext
    }

    /// The query with the context's interaction policy when it sets none itself.
    private static func merge(_ query: KeyQuery, _ context: AuthenticationContext?) -> KeyQuery {
        var query = query
        if query.authenticationUI == nil, let context { query.authenticationUI = context.interaction }
        return query
    }
}
