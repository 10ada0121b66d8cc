/// One change to a store's own named rows (its metadata, beside the items), made inside a
/// transaction: what a ``TransactionParticipant`` adds to an item write, and what
/// ``MetadataStore/writeMetadata(_:)`` commits on its own. Names and values are text the
/// participant owns; the store keeps them as given and never reads them.
public enum MetadataChange: Hashable, Sendable {
    /// Sets the row `name` to `value`, whatever it held.
    case set(name: String, value: String)
    /// Sets the row `name` to `value` when it is missing or holds a value that sorts before
    /// `value` (byte order): a row that only ever moves forward.
    case raise(name: String, value: String)
    /// Deletes every row whose name sorts from `from` through `through`, both included.
    case deleteRange(from: String, through: String)
}
