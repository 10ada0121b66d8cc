public import KeygateItems
public import KeygatePolicy
import Synchronization

/// An item store in memory, for tests and short-lived processes. Values are kept in wiped
/// buffers, not encrypted. Its named rows (``KeygateItems/MetadataStore``) are a dictionary,
/// changed with the items under one lock.
public final class InMemoryItemStore: ItemStore, MetadataStore {
    struct State {
        var nextID: Int64 = 1
        var items: [ItemID: (fields: ItemFields, data: SecretData)] = [:]
        var keys: [ItemID: (fields: KeyFields, blob: SecretData)] = [:]
        var metadata: [String: String] = [:]

        mutating func apply(_ changes: [MetadataChange]) {
            for change in changes {
                switch change {
                case .set(let name, let value): metadata[name] = value
                case .raise(let name, let value):
                    if metadata[name].map({ value > $0 }) ?? true { metadata[name] = value }
                case .deleteRange(let from, let through):
                    metadata = metadata.filter { !($0.key >= from && $0.key <= through) }
                }
            }
        }
    }

    let state = Mutex(State())
    /// The largest value accepted, in bytes.
    public let maximumValueLength: Int

    /// An empty store accepting values up to `maximumValueLength` bytes.
    public init(maximumValueLength: Int = ItemLimits.defaultMaximumValueLength) {
        self.maximumValueLength = maximumValueLength
    }

    /// The items matching `filter`, in the order they were added.
    public func items(matching filter: ItemFilter) throws(KeygateError) -> [ItemRecord] {
        state.withLock { state in
            state.items.filter { filter.matches($0.value.fields) }.sorted { $0.key < $1.key }
                .map {
                    ItemRecord(
                        id: $0.key, fields: $0.value.fields, sealed: .plain($0.value.data, fields: $0.value.fields))
                }
        }
    }

    /// The value read with the record (the same consistent snapshot as its fields).
    /// - Throws: `errSecDecode` when the record's fields are not the ones the value was stored
    ///   with (a value moved to another item, or an access control changed since).
    public func open(_ item: ItemRecord) throws(KeygateError) -> SecretData {
        guard case .plain(let data, let fields) = item.sealed else {
            throw KeygateError(.decode, "the record was not read from this store", condition: .foreignRecord)
        }
        guard fields == item.fields else {
            throw KeygateError(.decode, "item \(item.id) does not hold the value it was read with")
        }
        return data
    }

    /// Runs `body` on a copy of the state, adds `participant`'s changes to it, and keeps it
    /// only when both succeed: one commit, under the lock.
    func commit<T>(
        joining participant: (any TransactionParticipant)?, _ body: (inout State) throws(KeygateError) -> T
    ) throws(KeygateError) -> T {
        let result = try state.withLock { (state: inout State) throws(KeygateError) -> T in
            var next = state
            let result = try body(&next)
            if let participant { next.apply(participant.willCommit(into: self)) }
            state = next
            return result
        }
        participant?.didCommit()
        return result
    }

    /// Runs `body` with the rows as they are now.
    public func readMetadata<T: Sendable>(_ body: (any MetadataReading) throws(KeygateError) -> T) throws(KeygateError)
        -> T
    {
        try body(InMemoryMetadataReading(rows: state.withLock { $0.metadata }))
    }

    /// Applies `changes` at once.
    public func writeMetadata(_ changes: [MetadataChange]) throws(KeygateError) {
        state.withLock { $0.apply(changes) }
    }

    /// Adds items, all or none.
    @discardableResult
    public func insert(_ items: [NewItem], joining participant: (any TransactionParticipant)?) throws(KeygateError)
        -> [ItemRecord]
    {
        try ItemLimits.check(items.map { ($0.fields.identity, $0.data.count) }, maximum: maximumValueLength)
        return try commit(joining: participant) { (next: inout State) throws(KeygateError) -> [ItemRecord] in
            var records: [ItemRecord] = []
            for item in items {
                guard !next.items.values.contains(where: { $0.fields.identity == item.fields.identity }) else {
                    throw KeygateError(.duplicateItem, "an item \(item.fields.identity) already exists")
                }
                let id = ItemID(next.nextID)
                next.nextID += 1
                next.items[id] = (item.fields, item.data)
                records.append(ItemRecord(id: id, fields: item.fields, sealed: .plain(item.data, fields: item.fields)))
            }
            return records
        }
    }

    /// Replaces items, all or none.
    public func replace(_ replacements: [ItemReplacement], joining participant: (any TransactionParticipant)?)
        throws(KeygateError)
    {
        try ItemLimits.check(replacements.map { ($0.fields.identity, $0.data.count) }, maximum: maximumValueLength)
        try commit(joining: participant) { (next: inout State) throws(KeygateError) in
            for replacement in replacements {
                guard let current = next.items[replacement.id] else {
                    throw KeygateError(.itemNotFound, "item \(replacement.id) no longer exists")
                }
                if let expected = replacement.expected, !Self.holds(current.data, expected) {
                    throw KeygateError(
                        .notAvailable, "item \(replacement.id) was changed by another writer; nothing was changed",
                        condition: .racingWriter)
                }
                next.items[replacement.id] = (replacement.fields, replacement.data)
            }
            var seen = Set<ItemIdentity>()
            for value in next.items.values where !seen.insert(value.fields.identity).inserted {
                throw KeygateError(.duplicateItem, "an item \(value.fields.identity) already exists")
            }
        }
    }

    /// Whether `data` is the value `expected` was read with (a record of another store never is).
    private static func holds(_ data: SecretData, _ expected: SealedValue) -> Bool {
        if case .plain(let read, _) = expected { read === data } else { false }
    }

    /// Deletes items.
    public func delete(_ ids: [ItemID], joining participant: (any TransactionParticipant)?) throws(KeygateError) {
        try commit(joining: participant) { (state: inout State) throws(KeygateError) in
            for id in ids { state.items[id] = nil }
        }
    }

    /// Deletes items as they were read: one changed since (another value stored) deletes nothing.
    public func delete(_ records: [ItemRecord], joining participant: (any TransactionParticipant)?)
        throws(KeygateError)
    {
        try commit(joining: participant) { (state: inout State) throws(KeygateError) in
            for record in records {
                guard let current = state.items[record.id] else { continue }
                guard Self.holds(current.data, record.sealed) else {
                    throw KeygateError(
                        .notAvailable, "item \(record.id) was changed by another writer; nothing was deleted",
                        condition: .racingWriter)
                }
            }
            for record in records { state.items[record.id] = nil }
        }
    }
}

/// A copy of an ``InMemoryItemStore``'s rows.
struct InMemoryMetadataReading: MetadataReading {
    let rows: [String: String]

    func value(of name: String) throws(KeygateError) -> String? { rows[name] }

    func extent(from: String, before: String, valuesAbove above: String) throws(KeygateError) -> (
        count: Int, greatest: String?
    ) {
        let found = try values(from: from, before: before, valuesAbove: above)
        return (found.count, found.last)
    }

    func values(from: String, before: String, valuesAbove above: String) throws(KeygateError) -> [String] {
        rows.filter { $0.key >= from && $0.key < before && $0.value > above }.map(\.value).sorted()
    }
}
