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
}
