/// Something that writes its own rows in the same commit as an item write it was handed to, and
/// hears whether that commit happened: as GRDB's transaction observers hear a transaction end,
/// but able to add to it. The audit trail is one: a decision's record is committed with the item
/// the decision let change, so one flush makes both durable.
///
/// A participant is handed along an item write (`ItemStore.insert(_:joining:)` and the other
/// writes), never registered with a store. The store, inside its transaction and after the
/// items' own changes, asks ``willCommit(into:)`` once; then calls exactly one of
/// ``didCommit()`` (the changes are durable with the items) or ``didRollBack()`` (none of them
/// was written). A store that keeps no metadata asks nothing and calls neither.
public protocol TransactionParticipant: Sendable {
    /// The changes to write in the transaction being made now into the rows of `owner`
    /// (``MetadataStore/metadataOwner``); empty when there are none for that store.
    func willCommit(into owner: AnyObject) -> [MetadataChange]
    /// The transaction that carried the changes ``willCommit(into:)`` gave committed.
    func didCommit()
    /// The transaction rolled back: the changes it asked for were not written.
    func didRollBack()
}
