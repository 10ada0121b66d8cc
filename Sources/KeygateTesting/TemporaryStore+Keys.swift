public import KeygateItems
public import KeygatePolicy
public import KeygateStore

/// The fixture's key items: forwarded to ``TemporaryStore/base``, whose backends all keep keys.
extension TemporaryStore: KeyItemStore {
    private var keyBase: any KeyItemStore {
        get throws(KeygateError) {
            guard let keys = base as? any KeyItemStore else {
                throw KeygateError(.unimplemented, "the \(backend) store keeps no key items")
            }
            return keys
        }
    }

    /// Forwarded to ``base``.
    public func keys(matching filter: KeyFilter) throws(KeygateError) -> [KeyRecord] {
        try keyBase.keys(matching: filter)
    }

    /// Forwarded to ``base``.
    public func openKey(_ record: KeyRecord) throws(KeygateError) -> SecretData { try keyBase.openKey(record) }

    /// Forwarded to ``base``.
    @discardableResult
    public func insertKey(_ fields: KeyFields, blob: SecretData, joining participant: (any TransactionParticipant)?)
        throws(KeygateError) -> KeyRecord
    {
        try keyBase.insertKey(fields, blob: blob, joining: participant)
    }

    /// Forwarded to ``base``.
    public func updateKey(_ record: KeyRecord, to fields: KeyFields, joining participant: (any TransactionParticipant)?)
        throws(KeygateError)
    {
        try keyBase.updateKey(record, to: fields, joining: participant)
    }

    /// Forwarded to ``base``.
    public func deleteKeys(_ records: [KeyRecord], joining participant: (any TransactionParticipant)?)
        throws(KeygateError)
    {
        try keyBase.deleteKeys(records, joining: participant)
    }
}
