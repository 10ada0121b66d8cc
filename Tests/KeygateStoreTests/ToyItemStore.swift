import KeygatePolicy
import KeygateStore
import Synchronization

/// A small in-memory backend that can break one duty of `ItemStore` on purpose, to show the
/// contract catches it. Without a fault it honours every duty. It uses only the public API, as
/// a backend outside this package must: its records carry a version stamp as sealed bytes.
final class ToyItemStore: ItemStore {
    enum Fault: String, CaseIterable, Sendable, CustomStringConvertible {
        case none
        /// Adds an item whose identity already exists.
        case admitsDuplicates
        /// Keeps the entries of a batch that came before the one that failed.
        case appliesPartOfABatch
        /// Applies a replacement made from a record another writer changed since.
        case losesUpdates
        /// Opens a value whatever fields the record carries.
        case opensMovedValues
        /// Accepts values of any size.
        case ignoresTheLimit
        /// Quotes the value in its duplicate-item error.
        case showsValuesInErrors
        /// Returns items newest first.
        case forgetsTheOrder
        /// Tells a write's participant its changes committed, though it keeps no metadata.
        case confirmsUnwrittenChanges

        var description: String { rawValue }
    }

    private struct State {
        var next: Int64 = 1
        var nextVersion: UInt64 = 1
        var entries: [(id: ItemID, fields: ItemFields, data: SecretData, version: UInt64)] = []

        mutating func stamp() -> UInt64 {
            defer { nextVersion += 1 }
            return nextVersion
        }
    }

    private static func bytes(_ version: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: version >> (8 * $0)) }
    }

    private static func version(_ bytes: [UInt8]?) -> UInt64? {
        guard let bytes, bytes.count == 8 else { return nil }
        return bytes.enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * $1.offset) }
    }

    private let fault: Fault
    private let state = Mutex(State())

    init(_ fault: Fault) { self.fault = fault }

    func items(matching filter: ItemFilter) throws(KeygateError) -> [ItemRecord] {
        let records = state.withLock { state in
            state.entries.filter { filter.matches($0.fields) }
                .map { ItemRecord(id: $0.id, fields: $0.fields, sealed: Self.bytes($0.version)) }
        }
        return fault == .forgetsTheOrder ? records.reversed() : records
    }

    func open(_ item: ItemRecord) throws(KeygateError) -> SecretData {
        let version = Self.version(item.sealedBytes)
        let entry = state.withLock { state in state.entries.first { $0.version == version } }
        guard let entry, fault == .opensMovedValues || (entry.id == item.id && entry.fields == item.fields) else {
            throw KeygateError(.decode, "item \(item.id) does not hold the value it was read with")
        }
        return entry.data
    }

    @discardableResult
    func insert(_ items: [NewItem], joining participant: (any TransactionParticipant)?) throws(KeygateError)
        -> [ItemRecord]
    {
        try checkLimit(items.map(\.data))
        if fault == .confirmsUnwrittenChanges, let participant {
            _ = participant.willCommit(into: self)
            participant.didCommit()
        }
        return try state.withLock { (state: inout State) throws(KeygateError) -> [ItemRecord] in
            var next = state
            defer { if fault == .appliesPartOfABatch { state = next } }
            var records: [ItemRecord] = []
            for item in items {
                if fault != .admitsDuplicates,
                    next.entries.contains(where: { $0.fields.identity == item.fields.identity })
                {
                    let shown = fault == .showsValuesInErrors ? " (value \(text(item.data)))" : ""
                    throw KeygateError(.duplicateItem, "an item \(item.fields.identity) already exists\(shown)")
                }
                let id = ItemID(next.next)
                next.next += 1
                let version = next.stamp()
                next.entries.append((id, item.fields, item.data, version))
                records.append(ItemRecord(id: id, fields: item.fields, sealed: Self.bytes(version)))
            }
            state = next
            return records
        }
    }

    func replace(_ replacements: [ItemReplacement], joining participant: (any TransactionParticipant)?)
        throws(KeygateError)
    {
        try checkLimit(replacements.map(\.data))
        try state.withLock { (state: inout State) throws(KeygateError) in
            var next = state
            for replacement in replacements {
                guard let index = next.entries.firstIndex(where: { $0.id == replacement.id }) else {
                    throw KeygateError(.itemNotFound, "item \(replacement.id) no longer exists")
                }
                if fault != .losesUpdates, let expected = replacement.expectedSealedBytes,
                    Self.version(expected) != next.entries[index].version
                {
                    throw KeygateError(.notAvailable, "item \(replacement.id) was changed by another writer")
                }
                next.entries[index].fields = replacement.fields
                next.entries[index].data = replacement.data
                next.entries[index].version = next.stamp()
            }
            var seen = Set<ItemIdentity>()
            for entry in next.entries where !seen.insert(entry.fields.identity).inserted {
                throw KeygateError(.duplicateItem, "an item \(entry.fields.identity) already exists")
            }
            state = next
        }
    }

    func delete(_ ids: [ItemID], joining participant: (any TransactionParticipant)?) throws(KeygateError) {
        state.withLock { state in state.entries.removeAll { ids.contains($0.id) } }
    }

    private func checkLimit(_ values: [SecretData]) throws(KeygateError) {
        let limit = ItemLimits.defaultMaximumValueLength
        guard fault != .ignoresTheLimit, let big = values.first(where: { $0.count > limit }) else { return }
        throw KeygateError(.param, "a value of \(big.count) bytes is over the limit of \(limit) bytes")
    }

    private func text(_ data: SecretData) -> String {
        data.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }
}
