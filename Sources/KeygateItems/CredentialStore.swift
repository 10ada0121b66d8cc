public import KeygatePolicy

/// The shape most apps want over a keychain: one value per account of one service, on either
/// mode (any ``KeychainAccess``: the embedded `Keychain` or a `KeygateClient` talking to
/// `keygated`).
///
/// - ``save(_:account:prompt:context:)`` updates the item, adds it when missing, and updates again
///   when another process added it in between (a racing `errSecDuplicateItem`).
/// - ``read(account:prompt:context:)`` returns nil only when the item is not there and throws
///   everything else: a locked device or a cancelled prompt is never "no such item".
/// - ``delete(account:prompt:context:)`` succeeds when the item is already gone.
public struct CredentialStore: Sendable {
    /// The keychain underneath: embedded or through the daemon.
    public let keychain: any KeychainAccess
    /// The service every item belongs to.
    public let service: String
    /// The access group (nil: the caller's default, the keychain's first group). Every
    /// operation acts on this one group only, never on items of the same service and account
    /// in another group.
    public let accessGroup: String?
    /// The access control new items get (nil: a plain `whenUnlocked` item).
    public let accessControl: AccessControl?

    /// A credential store for `service` over `keychain` (a `Keychain` or any other
    /// ``KeychainAccess``).
    public init(
        keychain: any KeychainAccess, service: String, accessGroup: String? = nil, accessControl: AccessControl? = nil
    ) {
        self.keychain = keychain
        self.service = service
        self.accessGroup = accessGroup
        self.accessControl = accessControl
    }

    /// The group every operation acts on: the given one, else the caller's default. nil only
    /// when the keychain has no groups (every operation is then refused as unentitled).
    private var group: String? { accessGroup ?? keychain.accessGroups.first }

    private func query(_ account: String) -> ItemQuery {
        ItemQuery(service: service, account: account, accessGroup: group)
    }

    /// Stores `data` for `account`, replacing any value.
    ///
    /// Replacing a protected value needs the item's proof (updating decrypts): `prompt` says
    /// why, and it is asked once per save.
    public func save(
        _ data: SecretData, account: String, prompt: String? = nil, context: AuthenticationContext? = nil
    ) async throws(KeygateError) {
        var query = query(account)
        query.operationPrompt = prompt
        do {
            try await keychain.update(query, changes: ItemChanges(data: data), context: context)
            return
        } catch  where error.status == .itemNotFound {}
        do {
            let protection = accessControl.map(ItemProtection.accessControl) ?? .accessible(.default)
            try await keychain.add(
                AddRequest(service: service, account: account, accessGroup: group, protection: protection, data: data),
                context: context)
        } catch  where error.status == .duplicateItem {
            try await keychain.update(query, changes: ItemChanges(data: data), context: context)
        }
    }

    /// The value for `account`, or nil when there is none.
    public func read(account: String, prompt: String? = nil, context: AuthenticationContext? = nil)
        async throws(KeygateError) -> SecretData?
    {
        var query = query(account)
        query.returnData = true
        query.operationPrompt = prompt
        do {
            return try await keychain.copyMatching(query, context: context).first?.data
        } catch  where error.status == .itemNotFound {
            return nil
        }
    }

    /// Removes the value for `account`; succeeds when there is none. No proof is needed
    /// unless an organisation rule asks for one; `prompt` says why then.
    public func delete(account: String, prompt: String? = nil, context: AuthenticationContext? = nil)
        async throws(KeygateError)
    {
        var query = query(account)
        query.operationPrompt = prompt
        do {
            try await keychain.delete(query, context: context)
        } catch  where error.status == .itemNotFound {}
    }
}
