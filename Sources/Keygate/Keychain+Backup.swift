public import KeygatePolicy
public import KeygateStore

extension Keychain {
    /// An encrypted backup of the items that may migrate to another device: every item in the
    /// caller's groups except the `ThisDeviceOnly` ones, which Apple never migrates.
    ///
    /// Reading each value is gated like a read (prompting as needed on `context`); a cancel or
    /// a refusal fails the whole export.
    /// - Returns: the backup (see ``KeygateStore/BackupArchive``).
    /// - Throws: `errSecParam` for a context whose interaction policy is `skip` (an item that
    ///   needs a prompt is never left out of a backup); the status of a refused or failed read.
    public func exportBackup(
        passphrase: SecretData, strength: BackupArchive.Strength = .moderate,
        context given: AuthenticationContext? = nil
    ) async throws(KeygateError) -> [UInt8] {
        let query = ItemQuery(synchronizable: .any)
        let filter: ItemFilter
        let context: AuthenticationContext
        do throws(KeygateError) {
            filter = try self.filter(query)
            context = try self.context(given)
            // A backup leaves nothing out silently: skip is valid only for copyMatching.
            if context.interaction == .skip { throw KeygateError(.param, "skip is valid only for copyMatching") }
        } catch {
            throw refused(.export, query, error)
        }
        let interaction = Self.interaction(nil, context)
        var entries: [BackupArchive.Entry] = []
        for record in try candidates(filter, context: context).alive
        where !record.fields.accessControl.protection.isThisDeviceOnly {
            let rules = decide(.export, record.fields)
            let ruleIDs = try refuseEarly(rules, .export, record.fields)
            switch try await gate(
                record.fields.accessControl, .read, item: record.fields.identity, context: context,
                interaction: interaction, prompt: "Export a backup", audited: .export, ruleIDs: ruleIDs)
            {
            case .allowed:
                guard
                    try await review(
                        rules, .export, record.fields, context: context, interaction: interaction,
                        prompt: "Export a backup")
                else { continue }
                do {
                    entries.append(BackupArchive.Entry(fields: record.fields, data: try store.open(record)))
                } catch {
                    auditFailure(.export, record.fields.identity, record.fields.accessControl, error)
                    throw error
                }
            case .invalidated, .skipped:
                continue
            }
        }
        return try BackupArchive.seal(entries, passphrase: passphrase, strength: strength)
    }

    /// Restores a backup, all or nothing: every item must be in one of the caller's groups
    /// (`errSecMissingEntitlement`), must be addable now (its class available, biometry bound
    /// again to this device's enrollment, not `ThisDeviceOnly`, and not synchronizable with an
    /// access control, as ``add(_:context:)`` refuses), and must not exist yet
    /// (`errSecDuplicateItem`). Every refusal is audited.
    /// - Returns: how many items were restored.
    /// - Throws: `errSecDecode` for a wrong passphrase or a damaged backup; `errSecParam` for an
    ///   item add would refuse; nothing is imported then.
    @discardableResult
    public func importBackup(_ backup: [UInt8], passphrase: SecretData, context given: AuthenticationContext? = nil)
        async throws(KeygateError) -> Int
    {
        let entries: [BackupArchive.Entry]
        let context: AuthenticationContext
        do throws(KeygateError) {
            entries = try BackupArchive.open(backup, passphrase: passphrase)
            context = try self.context(given)
        } catch {
            throw refused(.import, service: nil, account: nil, accessGroup: nil, error)
        }
        // First every parameter check, as add makes them: no prompt before them.
        for entry in entries {
            let identity = entry.fields.identity
            do throws(KeygateError) {
                _ = try groups(identity.accessGroup)
                let control = entry.fields.accessControl
                if control.protection.isThisDeviceOnly {
                    throw KeygateError(.param, "\(identity) is ThisDeviceOnly and cannot be imported")
                }
                // A backup says nothing of how the control was given: any constraint is one.
                try Self.checkSynchronizable(
                    identity.synchronizable, control,
                    explicitControl: control.imposesAuthentication)
            } catch {
                throw refused(
                    .import, service: identity.service, account: identity.account, accessGroup: identity.accessGroup,
                    error)
            }
        }
        var items: [NewItem] = []
        for entry in entries {
            var fields = entry.fields
            // Bind again to this device: a backup's enrollment set belongs to the device it came from.
            var control = fields.accessControl
            if control.boundEnrollment != nil {
                control = try AccessControl(protection: control.protection, flags: control.flags)
            }
            var reviewed = fields
            reviewed.accessControl = control
            let rules = decide(.import, reviewed)
            let ruleIDs = try refuseEarly(rules, .import, reviewed)
            guard
                case .allowed(let decision) = try await gate(
                    control, .add, item: fields.identity, context: context, interaction: .fail,
                    prompt: "Import a backup", audited: .import, ruleIDs: ruleIDs)
            else { throw KeygateError(.internalError, "import was neither allowed nor refused") }
            fields.accessControl = decision.bindingEnrollment.map { control.bound(to: $0) } ?? control
            try await review(rules, .import, fields, context: context, interaction: .fail, prompt: "Import a backup")
            items.append(NewItem(fields: fields, data: entry.data))
        }
        do {
            try store.insert(items)
        } catch {
            for item in items { auditFailure(.import, item.fields.identity, item.fields.accessControl, error) }
            throw error
        }
        return items.count
    }
}
