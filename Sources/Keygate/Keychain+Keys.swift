public import KeygateItems
public import KeygateKeys
public import KeygatePolicy
import KeygateStore

/// Key items (spec §9): made inside the ``Keychain/keeper``, found, relabelled and deleted
/// without any proof (9.3.4, 9.6), and used (sign, key agreement) only once the key's access
/// control allows the operation (`osgn`, `ock`, spec 9.5), with the same proofs, reuse,
/// lockout, organisation rules and audit as item reads. The private half never leaves the
/// keeper through this API: its export is `errSecUnimplemented` (9.8.2).
extension Keychain {
    // MARK: - create

    /// Makes a random key inside the keeper and stores it, like `SecKeyCreateRandomKey` with
    /// a token id.
    ///
    /// The class must be available and, for `biometryCurrentSet`, the enrollment set is bound
    /// now (9.5.7); creation itself asks for no proof.
    /// - Returns: the new key's fields.
    /// - Throws: `errSecParam` for a synchronizable key (9.11.5) or a deprecated class;
    ///   `errSecMissingEntitlement` for another group; `errSecUnimplemented` when the store
    ///   keeps no keys.
    public func createKey(_ request: NewKeyRequest, context given: AuthenticationContext? = nil)
        async throws(KeygateError) -> KeyFields
    {
        try await storeKey(request, imported: nil, context: given)
    }

    /// Hands the keeper a private key made elsewhere (`keygate key import`): stored as
    /// ``KeygateItems/KeyFields/imported``, used exactly like a made key afterwards. `material` is a
    /// DER `ECPrivateKey` for P-256, the 32-byte seed for Ed25519.
    /// - Throws: as ``createKey(_:context:)``; `errSecParam` when `material` is not such a key,
    ///   or the keeper cannot import (a hardware keeper).
    public func importKey(
        _ request: NewKeyRequest, privateKey material: SecretData, context given: AuthenticationContext? = nil
    ) async throws(KeygateError) -> KeyFields {
        try await storeKey(request, imported: material, context: given)
    }

    private func storeKey(_ request: NewKeyRequest, imported: SecretData?, context given: AuthenticationContext?)
        async throws(KeygateError) -> KeyFields
    {
        var fields: KeyFields?
        try await inCall { (keychain) async throws(KeygateError) in
            fields = try await keychain.performStoreKey(request, imported: imported, context: given)
        }
        guard let fields else { throw KeygateError(.internalError, "the key was neither made nor refused") }
        return fields
    }

    private func performStoreKey(_ request: NewKeyRequest, imported: SecretData?, context given: AuthenticationContext?)
        async throws(KeygateError) -> KeyFields
    {
        let keys: any KeyItemStore
        let group: String
        let control: AccessControl
        let context: AuthenticationContext
        do throws(KeygateError) {
            keys = try keyItems()
            if request.synchronizable {
                throw KeygateError(.param, "a key held by the keeper cannot be synchronizable (spec 9.11.5)")
            }
            group = try groups(request.accessGroup)[0]
            control = try request.protection.accessControlValue()
            context = try self.context(given)
        } catch {
            throw refused(.add, service: request.label, account: nil, accessGroup: request.accessGroup, error)
        }
        let kept: KeptKey
        if let imported {
            guard let software = keeper as? SoftwareKeyKeeper else {
                throw KeygateError(.param, "the keeper \(keeper.tokenID) makes its keys itself and imports none")
            }
            kept = try software.adopt(imported, type: request.type)
        } else {
            kept = try keeper.generate(request.type)
        }
        let now = clock.now()
        var fields = KeyFields(
            accessGroup: group, label: request.label, applicationTag: request.applicationTag,
            applicationLabel: kept.publicKey.applicationLabel, type: request.type, tokenID: keeper.tokenID,
            imported: imported != nil, publicKey: kept.publicKey.externalRepresentation, accessControl: control,
            created: now, modified: now)
        let identity = fields.auditIdentity
        let rules = decide(.add, Self.ruled(fields))
        let ruleIDs = try refuseEarly(rules, .add, Self.ruled(fields))
        guard
            case .allowed(let decision) = try await gate(
                control.creationCheck, .add, item: identity, context: context,
                interaction: Self.interaction(nil, context),
                prompt: "Create key \(request.label ?? "")", ruleIDs: ruleIDs)
        else { throw KeygateError(.internalError, "the key's creation was neither allowed nor refused") }
        if let binding = decision.bindingEnrollment { fields.accessControl = control.bound(to: binding) }
        try await review(
            rules, .add, Self.ruled(fields), context: context, interaction: Self.interaction(nil, context),
            prompt: "Create key \(request.label ?? "")")
        try auditor.commit()
        do {
            try keys.insertKey(fields, blob: kept.blob, joining: auditor.call)
        } catch {
            auditFailure(.add, identity, fields.accessControl, error)
            throw error
        }
        return fields
    }

    // MARK: - find, update, delete (never authenticate)

    /// The keys matching `query`, attributes only: never authenticates, never prompts, even for
    /// a key whose class is locked (spec 9.3.4); each key listed is one audit record.
    /// - Throws: `errSecItemNotFound` when none matches.
    public func keys(matching query: KeyQuery) async throws(KeygateError) -> [KeyFields] {
        var found: [KeyFields] = []
        try await inCall { (keychain) async throws(KeygateError) in
            found = try keychain.performFindKeys(query).map(\.fields)
        }
        return found
    }

    private func performFindKeys(_ query: KeyQuery) throws(KeygateError) -> [KeyRecord] {
        let records = try records(query, kind: .read)
        for record in records {
            try auditor.record(
                AuditEvent(
                    kind: .read, item: record.fields.auditIdentity, accessControl: record.fields.accessControl,
                    decision: .allow, notes: Self.attributesOnlyNotes))
        }
        return records
    }

    /// The public half of the one key matching `query` (`SecKeyCopyPublicKey`: no proof, 9.6).
    /// - Throws: `errSecItemNotFound` when none matches; `errSecParam` when several do.
    public func publicKey(matching query: KeyQuery) async throws(KeygateError) -> PublicKey {
        let fields = try await keys(matching: query)
        guard fields.count == 1 else { throw Self.ambiguous(query, fields.count) }
        return try PublicKey(type: fields[0].type, bytes: fields[0].publicKey)
    }

    /// Never: a keeper key's private half is not exported (`SecKeyCopyExternalRepresentation`
    /// of an enclave key, spec 9.8.2).
    /// - Throws: `errSecUnimplemented` always.
    public func exportPrivateKey(matching query: KeyQuery) throws(KeygateError) -> Never {
        throw KeygateError(.unimplemented, "export not implemented for key: a keeper key's private half never leaves")
    }

    /// Changes the label or tag of every matching key, all or none: no proof (spec 9.6); the
    /// organisation's rules review each key as an update.
    /// - Throws: `errSecItemNotFound` when none matches; `errSecDuplicateItem` when a new tag
    ///   makes two keys collide.
    public func updateKeys(_ query: KeyQuery, changes: KeyChanges) async throws(KeygateError) {
        try await inCall { (keychain) async throws(KeygateError) in
            let keys = try keychain.keyItems()
            let records = try keychain.records(query, kind: .update)
            let now = keychain.clock.now()
            for record in records {
                if let damage = record.damage { throw keychain.refuseDamaged(record, damage, .update) }
                var updated = record.fields
                if let label = changes.label { updated.label = label }
                if let tag = changes.applicationTag { updated.applicationTag = tag }
                updated.modified = now
                try keychain.admitWithoutProof(.update, record)
                try keychain.auditor.commit()
                do throws(KeygateError) {
                    try keys.updateKey(record, to: updated, joining: keychain.auditor.call)
                } catch {
                    keychain.auditFailure(.update, record.fields.auditIdentity, record.fields.accessControl, error)
                    throw error
                }
            }
        }
    }

    /// Deletes every matching key, all or none (`odel` is always allowed, spec 9.6); the
    /// organisation's rules may forbid it.
    /// - Throws: `errSecItemNotFound` when none matches.
    public func deleteKeys(_ query: KeyQuery) async throws(KeygateError) {
        try await inCall { (keychain) async throws(KeygateError) in
            let keys = try keychain.keyItems()
            let records = try keychain.records(query, kind: .delete)
            for record in records { try keychain.admitWithoutProof(.delete, record) }
            try keychain.auditor.commit()
            do throws(KeygateError) {
                try keys.deleteKeys(records, joining: keychain.auditor.call)
            } catch {
                for record in records {
                    keychain.auditFailure(.delete, record.fields.auditIdentity, record.fields.accessControl, error)
                }
                throw error
            }
        }
    }

    // MARK: - use

    /// Signs `input` with the one key matching `query` (`SecKeyCreateSignature`), once the key's
    /// access control allows `osgn`: DER X9.62 for the ECDSA algorithms, 64 raw bytes for Ed25519.
    ///
    /// The audit record names the key, the algorithm and the SHA-256 of `input` (never `input`),
    /// with `notes` (where the signature is for) after them.
    /// - Throws: `errSecItemNotFound` when no key matches; `errSecParam` when several do, for
    ///   `skip`, for an algorithm the key cannot do or a digest of the wrong size;
    ///   `errSecAuthFailed` when the access control grants no signing (9.5.5), a proof fails or
    ///   the key's enrollment set changed; `errSecUserCanceled`; `errSecInteractionNotAllowed`.
    public func sign(
        _ input: [UInt8], algorithm: SignatureAlgorithm, key query: KeyQuery,
        context given: AuthenticationContext?, notes: [AuditNote]
    ) async throws(KeygateError) -> [UInt8] {
        try await useKey(
            query, .sign, algorithm: algorithm.rawValue, input: input, notes: notes, context: given
        ) { (record, blob) async throws(KeygateError) in
            try self.keeper.sign(input, algorithm: algorithm, with: blob, type: record.fields.type)
        }
    }

    /// ECDH with the one key matching `query` and `peer` (`SecKeyCopyKeyExchangeResult` with
    /// `ecdhKeyExchangeStandard`, or `…Cofactor`: the same bytes for P-256, spec 9.9.6), once the
    /// key's access control allows `ock`.
    /// - Returns: the 32-byte shared x-coordinate.
    /// - Throws: as ``sign(_:algorithm:key:context:notes:)``; `errSecParam` for an Ed25519 key.
    public func sharedSecret(
        with peer: PublicKey, key query: KeyQuery, context given: AuthenticationContext? = nil
    ) async throws(KeygateError) -> SecretData {
        try await useKey(
            query, .computeKey, algorithm: "algid:keyexchange:ECDH", input: peer.bytes, notes: [], context: given
        ) { (record, blob) async throws(KeygateError) in
            try self.keeper.sharedSecret(with: peer, using: blob, type: record.fields.type)
        }
    }

    /// Decrypts an ECIES message made for the one key matching `query`
    /// (`SecKeyCreateDecryptedData`, spec 9.9.8), once the key's access control allows `ock`:
    /// the keeper does the ECDH step, the KDF and AES-GCM run here. The audit record names the
    /// algorithm and the SHA-256 of the message.
    /// - Throws: as ``sharedSecret(with:key:context:)``; `errSecParam` "too small input packet"
    ///   or "Failed to aes-gcm decrypt data" for a message that does not open (9.8.2).
    public func decrypt(
        _ message: [UInt8], algorithm: ECIESAlgorithm, key query: KeyQuery, context given: AuthenticationContext? = nil
    ) async throws(KeygateError) -> SecretData {
        guard message.count >= 65 + 16 else {
            throw KeygateError(.param, "too small input packet: \(message.count) bytes, less than a point and a tag")
        }
        return try await useKey(
            query, .computeKey, algorithm: algorithm.rawValue, input: message, notes: [], context: given
        ) { (record, blob) async throws(KeygateError) in
            try await ECIES.open(message, algorithm: algorithm) { (ephemeral) throws(KeygateError) in
                try self.keeper.sharedSecret(with: ephemeral, using: blob, type: record.fields.type)
            }
        }
    }

    /// One use of a key in one audit call: the gate (``unlockKey(_:_:algorithm:input:notes:context:)``),
    /// then `body` with the opened blob; a failure of `body` (the keeper's) is audited and thrown.
    private func useKey<Result: Sendable>(
        _ query: KeyQuery, _ operation: Operation, algorithm: String, input: [UInt8], notes: [AuditNote],
        context given: AuthenticationContext?,
        _ body: @Sendable (KeyRecord, SecretData) async throws(KeygateError) -> Result
    ) async throws(KeygateError) -> Result {
        var result: Result?
        try await inCall { (keychain) async throws(KeygateError) in
            let (record, blob) = try await keychain.unlockKey(
                query, operation, algorithm: algorithm, input: input, notes: notes, context: given)
            do throws(KeygateError) {
                result = try await body(record, blob)
            } catch {
                keychain.auditFailure(
                    AuditEvent.Kind(operation), record.fields.auditIdentity, record.fields.accessControl, error)
                throw error
            }
        }
        guard let result else { throw KeygateError(.internalError, "the key was neither used nor refused") }
        return result
    }

    /// Finds the one key `query` names, gates `operation` on its access control (proving what it
    /// asks for), applies the organisation's rules, and opens its blob for the keeper.
    private func unlockKey(
        _ query: KeyQuery, _ operation: Operation, algorithm: String, input: [UInt8], notes extra: [AuditNote],
        context given: AuthenticationContext?
    ) async throws(KeygateError) -> (KeyRecord, SecretData) {
        let kind = AuditEvent.Kind(operation)
        let keys: any KeyItemStore
        let context: AuthenticationContext
        do throws(KeygateError) {
            keys = try keyItems()
            if query.authenticationUI == .skip { throw KeygateError(.param, "skip is valid only for copyMatching") }
            context = try self.context(given)
        } catch {
            throw refused(kind, service: query.label, account: nil, accessGroup: query.accessGroup, error)
        }
        let found = try records(query, kind: kind)
        guard found.count == 1 else { throw Self.ambiguous(query, found.count) }
        let record = found[0]
        if let damage = record.damage { throw refuseDamaged(record, damage, kind) }
        let fields = record.fields
        let identity = fields.auditIdentity
        let notes = [AuditNote.keyUse(algorithm: algorithm, inputSHA256: Hex.string(SHA256.hash(input)))] + extra
        let interaction = Self.interaction(query.authenticationUI, context)
        func prompt() -> String {
            query.operationPrompt
                ?? "\(operation == .sign ? "Sign with" : "Use") key \(fields.label ?? identity.account)"
        }
        let rules = decide(PolicyAction(operation), Self.ruled(fields))
        let ruleIDs = try refuseEarly(rules, PolicyAction(operation), Self.ruled(fields))
        switch try await gate(
            fields.accessControl, operation, item: identity, context: context, interaction: interaction,
            prompt: prompt(), ruleIDs: ruleIDs, notes: notes)
        {
        case .allowed: break
        case .skipped: throw KeygateError(.interactionNotAllowed, "\(operation) of key \(identity) needs a proof")
        case .invalidated:
            // The key is kept (its row carries no secret to lose): only its use fails (spec 9.8.2).
            throw KeygateError(
                .authFailed,
                "\(operation) of key \(identity) refused: the key's enrollment set or passcode changed since it was "
                    + "made; it is kept, but can no longer be used")
        }
        if !rules.addsNothing {
            try await review(
                rules, PolicyAction(operation), Self.ruled(fields), context: context, interaction: interaction,
                prompt: prompt())
        }
        do {
            return (record, try keys.openKey(record))
        } catch {
            auditFailure(kind, identity, fields.accessControl, error)
            throw error
        }
    }

    // MARK: - shared

    /// An update or delete of a key row, which needs no proof (spec 9.6): refused when the
    /// organisation's rules forbid it, else recorded as allowed.
    private func admitWithoutProof(_ operation: Operation, _ record: KeyRecord) throws(KeygateError) {
        let action = PolicyAction(operation)
        _ = try refuseEarly(decide(action, Self.ruled(record.fields)), action, Self.ruled(record.fields))
        try auditor.record(
            AuditEvent(
                kind: AuditEvent.Kind(operation), item: record.fields.auditIdentity,
                accessControl: record.fields.accessControl, decision: .allow,
                reasons: [.operationNeedsNoAuthentication(operation)]))
    }

    /// The store's keys, or `errSecUnimplemented` for a store that keeps none.
    func keyItems() throws(KeygateError) -> any KeyItemStore {
        guard let keyStore else {
            throw KeygateError(.unimplemented, "this keychain's store keeps no key items")
        }
        return keyStore
    }

    /// The keys `query` names in the groups it may touch; refusals before the search are audited as `kind`.
    /// - Throws: `errSecItemNotFound` when none matches.
    func records(_ query: KeyQuery, kind: AuditEvent.Kind) throws(KeygateError) -> [KeyRecord] {
        let filter: KeyFilter
        let keys: any KeyItemStore
        do throws(KeygateError) {
            keys = try keyItems()
            filter = KeyFilter(
                accessGroups: try groups(query.accessGroup), label: query.label, applicationTag: query.applicationTag,
                applicationLabel: query.applicationLabel, type: query.type)
        } catch {
            throw refused(kind, service: query.label, account: nil, accessGroup: query.accessGroup, error)
        }
        let found = try keys.keys(matching: filter)
        guard !found.isEmpty else { throw KeygateError(.itemNotFound, "no key matches \(query.summary)") }
        return found
    }

    /// The refusal of a use or export naming several keys: one key is used at a time.
    static func ambiguous(_ query: KeyQuery, _ count: Int) -> KeygateError {
        KeygateError(.param, "\(count) keys match \(query.summary): name one (by its application label)")
    }

    /// What the organisation's rules see of a key: its audit identity, label and access control.
    static func ruled(_ fields: KeyFields) -> ItemFields {
        ItemFields(
            identity: fields.auditIdentity, label: fields.label, accessControl: fields.accessControl,
            created: fields.created, modified: fields.modified)
    }

    /// The refusal of a key record the search found damaged, with the tamper audited.
    func refuseDamaged(_ record: KeyRecord, _ damage: String, _ kind: AuditEvent.Kind) -> KeygateError {
        let error = KeygateError(.decode, damage, condition: .damagedItem)
        auditFailure(kind, record.fields.auditIdentity, nil, error)
        return error
    }
}
