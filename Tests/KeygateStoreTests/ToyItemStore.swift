import KeygatePolicy
import KeygateStore
import Synchronization

/// A small in-memory backend that can break one duty of `ItemStore` on purpose, to show the
/// contract catches it. Without a fault it honours every duty.
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

        var description: String { rawValue }
    }

    private struct State {
        var next: Int64 = 1
        var entries: [(id: ItemID, fields: ItemFields, data: SecretData)] = []
    }

    private let fault: Fault
    private let state = Mutex(State())

    init(_ fault: Fault) { self.fault = fault }

    func items(matching filter: ItemFilter) throws(KeygateError) -> [ItemRecord] {
        let records = state.withLock { state in
            state.entries.filter { filter.matches($0.fields) }
                .map { ItemRecord(id: $0.id, fields: $0.fields, sealed: .plain($0.data, fields: $0.fields)) }
        }
        return fault == .forgetsTheOrder ? records.reversed() : records
    }

    func open(_ item: ItemRecord) throws(KeygateError) -> SecretData {
        guard case .plain(let data, let fields) = item.sealed, fault == .opensMovedValues || fields == item.fields
        else { throw KeygateError(.decode, "item \(item.id) does not hold the value it was read with") }
        return data
    }

    @discardableResult
    func insert(_ items: [NewItem]) throws(KeygateError) -> [ItemRecord] {
        try checkLimit(items.map(\.data))
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
                next.entries.append((id, item.fields, item.data))
                records.append(ItemRecord(id: id, fields: item.fields, sealed: .plain(item.data, fields: item.fields)))
            }
            state = next
            return records
        }
    }

    func replace(_ replacements: [ItemReplacement]) throws(KeygateError) {
        try checkLimit(replacements.map(\.data))
        let expected = replacements.map { replacement -> SecretData? in
            // The record a replacement was made from, as `ItemReplacement(replacing:)` keeps it.
            guard case .plain(let data, _)? = replacement.expected else { return nil }
            return data
        }
        try state.withLock { (state: inout State) throws(KeygateError) in
            var next = state
            for (replacement, expected) in zip(replacements, expected) {
                guard let index = next.entries.firstIndex(where: { $0.id == replacement.id }) else {
                    throw KeygateError(.itemNotFound, "item \(replacement.id) no longer exists")
                }
                if fault != .losesUpdates, let expected, expected !== next.entries[index].data {
                    throw KeygateError(.notAvailable, "item \(replacement.id) was changed by another writer")
                }
                next.entries[index].fields = replacement.fields
                next.entries[index].data = replacement.data
            }
            var seen = Set<ItemIdentity>()
            for entry in next.entries where !seen.insert(entry.fields.identity).inserted {
                throw KeygateError(.duplicateItem, "an item \(entry.fields.identity) already exists")
            }
            state = next
        }
    }

    func delete(_ ids: [ItemID]) throws(KeygateError) {
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
