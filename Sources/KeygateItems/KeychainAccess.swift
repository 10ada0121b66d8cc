public import KeygatePolicy

/// The item operations both modes offer: the embedded `Keychain` (the gate in this process)
/// and `KeygateClient` (the gate in `keygated`, over its socket). Code written against
/// `any KeychainAccess`, such as ``CredentialStore``, runs unchanged on either.
///
/// Both raise the same `KeygateError` statuses for the same requests: the daemon runs the same
/// facade and its error frames carry the status. What differs is where the proof is made: an
/// embedded keychain proves in this process and records proofs in the `context` given; a
/// client's proofs are made and kept by the daemon, so of a `context` it sends only the reuse
/// window and the interaction policy.
public protocol KeychainAccess: Sendable {
    /// The access groups this caller uses; the first is the default group of new items.
    var accessGroups: [String] { get }

    /// Adds an item, as `Keychain.add(_:context:)`.
    /// - Throws: `errSecDuplicateItem` when the item exists, and whatever the gate refuses with.
    func add(_ request: AddRequest, context: AuthenticationContext?) async throws(KeygateError)

    /// Finds items, as `Keychain.copyMatching(_:context:)`.
    /// - Throws: `errSecItemNotFound` when nothing matches, and whatever the gate refuses with.
    func copyMatching(_ query: ItemQuery, context: AuthenticationContext?) async throws(KeygateError)
        -> [MatchedItem]

    /// Changes items, as `Keychain.update(_:changes:context:)`.
    /// - Throws: `errSecItemNotFound` when nothing matches, and whatever the gate refuses with.
    func update(_ query: ItemQuery, changes: ItemChanges, context: AuthenticationContext?) async throws(KeygateError)

    /// Deletes items, as `Keychain.delete(_:context:)`.
    /// - Throws: `errSecItemNotFound` when nothing matches, and whatever the gate refuses with.
    func delete(_ query: ItemQuery, context: AuthenticationContext?) async throws(KeygateError)

    /// Makes a key inside the keeper, as `Keychain.createKey(_:context:)`.
    /// - Throws: `errSecParam` for a synchronizable key, and whatever the gate refuses with.
    func createKey(_ request: NewKeyRequest, context: AuthenticationContext?) async throws(KeygateError) -> KeyFields

    /// Hands the keeper a private key made elsewhere, as `Keychain.importKey(_:privateKey:context:)`.
    func importKey(_ request: NewKeyRequest, privateKey: SecretData, context: AuthenticationContext?)
        async throws(KeygateError) -> KeyFields

    /// The keys matching `query`, attributes only, never authenticating (spec 9.3.4).
    /// - Throws: `errSecItemNotFound` when none matches.
    func keys(matching query: KeyQuery) async throws(KeygateError) -> [KeyFields]

    /// Changes keys' labels or tags, never authenticating (spec 9.6).
    func updateKeys(_ query: KeyQuery, changes: KeyChanges) async throws(KeygateError)

    /// Deletes keys, never authenticating (spec 9.6).
    func deleteKeys(_ query: KeyQuery) async throws(KeygateError)

    /// Signs with the one key matching `query`, once its access control allows `osgn`.
    func sign(_ input: [UInt8], algorithm: SignatureAlgorithm, key query: KeyQuery, context: AuthenticationContext?)
        async throws(KeygateError) -> [UInt8]

    /// ECDH of the one key matching `query` with the peer's public key (X9.63 for P-256),
    /// once its access control allows `ock`: the 32-byte shared x-coordinate.
    func sharedSecret(withPeer peer: [UInt8], key query: KeyQuery, context: AuthenticationContext?)
        async throws(KeygateError) -> SecretData

    /// Decrypts an ECIES message (Apple's layout, spec 9.9.8) with the one key matching
    /// `query`, once its access control allows `ock`.
    func decrypt(_ message: [UInt8], algorithm: ECIESAlgorithm, key query: KeyQuery, context: AuthenticationContext?)
        async throws(KeygateError) -> SecretData
}
