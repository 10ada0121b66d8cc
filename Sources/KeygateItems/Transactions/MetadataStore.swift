public import KeygatePolicy

/// A store's own named rows, beside its items, for the parts of the program that keep state
/// with the items they describe (the audit trail keeps its anchor and its held records there).
///
/// Duties of a conforming type:
/// - ``readMetadata(_:)`` gives its body one view of one commit (no write of another process
///   or thread is seen half-way);
/// - ``writeMetadata(_:)`` applies every change or none, in one transaction of its own, and it
///   survives the process being killed once it returns (a power loss may take it back to an
///   earlier commit, never to a mix);
/// - an item write handed a ``TransactionParticipant`` writes the participant's changes in the
///   same commit as the items, or none of them (see ``TransactionParticipant``).
public protocol MetadataStore: AnyObject, Sendable {
    /// Runs `body` with a view of the rows as of one commit.
    /// - Throws: what `body` throws, or the store's error when the rows cannot be read.
    func readMetadata<T: Sendable>(_ body: (any MetadataReading) throws(KeygateError) -> T) throws(KeygateError) -> T
    /// Applies `changes`, all or none, in one transaction of its own.
    func writeMetadata(_ changes: [MetadataChange]) throws(KeygateError)
    /// The object whose rows these are: the store itself, or the store a wrapper forwards to.
    /// A participant's changes are written only into the rows of the store it keeps them in
    /// (``TransactionParticipant/willCommit(into:)``), whichever object forwarded the write.
    var metadataOwner: AnyObject { get }
}

extension MetadataStore {
    /// The store itself.
    public var metadataOwner: AnyObject { self }
}

/// One commit's view of a store's named rows (``MetadataStore/readMetadata(_:)``).
public protocol MetadataReading {
    /// The value of the row `name`, nil when there is none.
    func value(of name: String) throws(KeygateError) -> String?
    /// How many rows with a name from `from` up to (not including) `before` hold a value that
    /// sorts after `above`, and the greatest of those values.
    func extent(from: String, before: String, valuesAbove above: String) throws(KeygateError) -> (
        count: Int, greatest: String?
    )
    /// The values of those rows, in value order.
    func values(from: String, before: String, valuesAbove above: String) throws(KeygateError) -> [String]
}
