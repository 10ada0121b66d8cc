public import KeygatePolicy
public import KeygateStore

/// A fresh, empty item store of one ``Backend`` in a ``TemporaryDirectory`` it owns: the
/// directory and the database in it are removed when the fixture is released.
///
/// The fixture is itself the store (every call is forwarded), so whoever holds the store holds
/// the directory: no separate value needs keeping alive.
///
/// ```swift
/// @Test(arguments: Backend.allCases)
/// func addThenFind(_ backend: Backend) throws {
///     let store = try TemporaryStore(backend)
///     try store.insert([NewItem(fields: fields, data: SecretData("value"))])
/// }
/// ```
public final class TemporaryStore: ItemStore, MetadataStore {
    /// The backend the store is.
    public let backend: Backend
    /// The directory the fixture owns (the SQLite database is `items.db` in it).
    public let directory: TemporaryDirectory
    /// The store every call is forwarded to.
    public let base: any ItemStore & MetadataStore

    /// A fresh store accepting values up to `maximumValueLength` bytes.
    /// - Throws: when the directory or the database cannot be created.
    public init(_ backend: Backend, maximumValueLength: Int = ItemLimits.defaultMaximumValueLength) throws {
        self.backend = backend
        directory = try TemporaryDirectory()
        switch backend {
        case .inMemory: base = InMemoryItemStore(maximumValueLength: maximumValueLength)
        case .sqlite:
            base = try SQLiteItemStore(path: directory.path + "/items.db", maximumValueLength: maximumValueLength)
        }
    }

    /// The SQLite database's path, or nil for a store in memory.
    public var databasePath: String? { backend == .sqlite ? directory.path + "/items.db" : nil }

    /// Makes item `id`'s access control untrustworthy behind the store's back, as someone
    /// editing the database file would (its column then holds text that does not parse).
    /// - Throws: `errSecUnimplemented` for a store in memory, which has no file to edit.
    public func damageAccessControl(of id: ItemID) throws(KeygateError) {
        guard let sqlite = base as? SQLiteItemStore else {
            throw KeygateError(.unimplemented, "a store in memory has no file to damage")
        }
        try sqlite.executeRawSQL("UPDATE items SET accc = 'damaged by a test' WHERE id = \(id.rawValue)")
    }

    /// Forwarded to ``base``.
    public func items(matching filter: ItemFilter) throws(KeygateError) -> [ItemRecord] {
        try base.items(matching: filter)
    }

    /// Forwarded to ``base``.
    public func open(_ item: ItemRecord) throws(KeygateError) -> SecretData { try base.open(item) }

    /// Forwarded to ``base``.
    public func verify(_ item: ItemRecord) throws(KeygateError) { try base.verify(item) }

    /// Forwarded to ``base``.
    @discardableResult
    public func insert(_ items: [NewItem], joining participant: (any TransactionParticipant)?) throws(KeygateError)
        -> [ItemRecord]
    {
        try base.insert(items, joining: participant)
    }

    /// Forwarded to ``base``.
    public func replace(_ replacements: [ItemReplacement], joining participant: (any TransactionParticipant)?)
        throws(KeygateError)
    {
        try base.replace(replacements, joining: participant)
    }

    /// Forwarded to ``base``.
    public func delete(_ ids: [ItemID], joining participant: (any TransactionParticipant)?) throws(KeygateError) {
        try base.delete(ids, joining: participant)
    }

    /// Forwarded to ``base``.
    public func delete(_ records: [ItemRecord], joining participant: (any TransactionParticipant)?)
        throws(KeygateError)
    {
        try base.delete(records, joining: participant)
    }

    /// Forwarded to ``base``.
    public func readMetadata<T: Sendable>(_ body: (any MetadataReading) throws(KeygateError) -> T)
        throws(KeygateError) -> T
    {
        try base.readMetadata(body)
    }

    /// Forwarded to ``base``.
    public func writeMetadata(_ changes: [MetadataChange]) throws(KeygateError) { try base.writeMetadata(changes) }

    /// ``base``'s rows are these.
    public var metadataOwner: AnyObject { base.metadataOwner }
}
