public import KeygatePolicy

/// Where items live: a pluggable backend under the gated `Keychain` facade.
///
/// A backend stores items; it never decides who may read them (the facade asks the
/// evaluator first). Duties of every conforming type, each checked by
/// ``KeygateTesting/ItemStoreContract``, the suite every conforming type must pass (this
/// package's backends run it in `KeygateStoreTests`). A backend outside this package makes its
/// records with ``ItemRecord/init(id:fields:sealed:damage:)``, carrying its own form of the value,
/// and honours no lost updates through ``ItemReplacement/expectedSealedBytes``:
///
/// - **Primary key.** At most one item per ``KeygatePolicy/ItemIdentity``; an insert or replace that would
///   make two fails with `errSecDuplicateItem` and changes nothing.
/// - **All or nothing.** ``insert(_:joining:)``, ``replace(_:joining:)`` and `delete` (by ids or by records)
///   apply every entry or none; a replacement of an id that is gone fails with
///   `errSecItemNotFound`, and one made with ``ItemReplacement/init(replacing:fields:data:)`` of
///   an item another writer changed since it was read fails with `errSecNotAvailable` (no lost
///   updates; this package's backends give it the cause
///   ``KeygatePolicy/KeygateError/Condition/racingWriter``), as does a delete by records of such
///   an item.
/// - **Damaged rows.** A row whose access control cannot be trusted is returned with
///   ``ItemRecord/damage`` set, so it can still be deleted, instead of failing every search
///   (for backends that keep rows outside memory, where someone else can edit them).
/// - **Consistent reads.** ``items(matching:)`` returns each record's fields and sealed value
///   from one read, in the order the items were added.
/// - **Bound values.** ``open(_:)`` returns the value only for exactly the fields it was
///   stored with: a value moved to another item, or an item whose access control was changed
///   behind the store's back, fails with `errSecDecode`, never with a value.
/// - **Secrets stay secret.** Values never appear in a description, an error or a log line;
///   copies are wiped when released (the contract checks descriptions and errors; wiping is
///   ``KeygateItems/SecretData``'s).
/// - **Bounded values.** ``insert(_:joining:)`` and ``replace(_:joining:)`` refuse a value larger than the
///   store's limit (``ItemLimits/defaultMaximumValueLength``, 16 MiB, unless configured) with
///   `errSecParam` and a message giving the limit, and change nothing.
/// - **Participants.** A write handed a ``KeygateItems/TransactionParticipant`` (`joining:`)
///   either writes the participant's changes (``KeygateItems/TransactionParticipant/willCommit(into:)``)
///   in the same commit as the items and then tells it ``KeygateItems/TransactionParticipant/didCommit()``,
///   or writes none of them and tells it ``KeygateItems/TransactionParticipant/didRollBack()`` (a
///   failed write), or, for a store that keeps no metadata (``KeygateItems/MetadataStore``),
///   never asks it anything.
/// - **Fail closed.** Every failure is a thrown ``KeygatePolicy/KeygateError`` with the status of spec
///   §6.1 (for SQLite: constraint → `errSecDuplicateItem`, read-only → `errSecReadOnly`,
///   no memory → `errSecAllocate`, I/O → `errSecIO`, type mismatch → `errSecNoSuchAttr`,
///   anything else → `errSecNotAvailable`, each keeping SQLite's extended code as its
///   ``KeygatePolicy/KeygateError/cause``); a failure never erases data.
public protocol ItemStore: Sendable {
    /// The items matching `filter`, in the order they were added.
    func items(matching filter: ItemFilter) throws(KeygateError) -> [ItemRecord]
    /// The value of a record read from this store.
    func open(_ item: ItemRecord) throws(KeygateError) -> SecretData
    /// Checks that a record's fields are the ones its value was stored with (the same check as
    /// ``open(_:)``, without handing the value out): the facade calls it before it trusts a
    /// stored access control to decide an update.
    func verify(_ item: ItemRecord) throws(KeygateError)
    /// Adds items, all or none, with `participant`'s changes in the same commit.
    /// - Returns: their records, in order.
    @discardableResult
    func insert(_ items: [NewItem], joining participant: (any TransactionParticipant)?) throws(KeygateError)
        -> [ItemRecord]
    /// Replaces items' fields and values, all or none, with `participant`'s changes in the same commit.
    func replace(_ replacements: [ItemReplacement], joining participant: (any TransactionParticipant)?)
        throws(KeygateError)
    /// Deletes items, all or none, with `participant`'s changes in the same commit; ids already
    /// gone are ignored.
    func delete(_ ids: [ItemID], joining participant: (any TransactionParticipant)?) throws(KeygateError)
    /// Deletes items as they were read, all or none, with `participant`'s changes in the same
    /// commit: when another writer changed one since its record was read (moved it to another
    /// group, gave it another access control or value), nothing is deleted and the call fails
    /// with `errSecNotAvailable` (``KeygatePolicy/KeygateError/Condition/racingWriter``);
    /// records already gone are ignored.
    func delete(_ records: [ItemRecord], joining participant: (any TransactionParticipant)?) throws(KeygateError)
}

extension ItemStore {
    /// Adds items, all or none, with no participant.
    /// - Returns: their records, in order.
    @discardableResult
    public func insert(_ items: [NewItem]) throws(KeygateError) -> [ItemRecord] {
        try insert(items, joining: nil)
    }

    /// Replaces items' fields and values, all or none, with no participant.
    public func replace(_ replacements: [ItemReplacement]) throws(KeygateError) {
        try replace(replacements, joining: nil)
    }

    /// Deletes items, all or none, with no participant; ids already gone are ignored.
    public func delete(_ ids: [ItemID]) throws(KeygateError) { try delete(ids, joining: nil) }

    /// Deletes items as they were read, all or none, with no participant (as the requirement
    /// taking records and a participant does).
    public func delete(_ records: [ItemRecord]) throws(KeygateError) { try delete(records, joining: nil) }

    /// Opens the value and discards it at once (the copy is wiped when released).
    public func verify(_ item: ItemRecord) throws(KeygateError) {
        _ = try open(item)
    }

    /// For a backend that keeps no version of its items: deletes by id, unable to tell an item
    /// changed since it was read from the one read.
    public func delete(_ records: [ItemRecord], joining participant: (any TransactionParticipant)?)
        throws(KeygateError)
    {
        try delete(records.map(\.id), joining: participant)
    }
}

/// The size limits every ``ItemStore`` backend of this package enforces.
public enum ItemLimits {
    /// The largest item value a store accepts unless configured otherwise: 16 MiB.
    public static let defaultMaximumValueLength = 16 << 20

    /// Refuses values longer than `maximum` bytes.
    /// - Throws: `errSecParam` naming the item and the limit.
    static func check(_ values: [(ItemIdentity, Int)], maximum: Int) throws(KeygateError) {
        for (identity, length) in values where length > maximum {
            throw KeygateError(
                .param,
                "the value of \(identity) is \(length) bytes, more than the store's limit of \(describe(maximum)); "
                    + "nothing was changed")
        }
    }

    /// `16 MiB (16777216 bytes)`, or a byte count.
    static func describe(_ bytes: Int) -> String {
        bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB (\(bytes) bytes)" : "\(bytes) bytes"
    }
}
