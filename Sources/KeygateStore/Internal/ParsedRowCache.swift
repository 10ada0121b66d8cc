import KeygatePolicy

/// What the SQLite store has already worked out about its rows: each row's access control
/// parsed once per version of the row, and the associated data its value is sealed with
/// rendered once, so a repeated read neither re-parses nor re-renders text.
///
/// An entry is keyed by the row's id and holds the stored access-control text it was parsed
/// from: it is used only while the row's text is byte for byte that text (compared in place,
/// without copying), so an edit behind the store's back is parsed afresh, never hidden. The
/// associated data is reused only for a record whose identity and access control equal the
/// ones it was computed for. A row not seen before whose text was already parsed for another
/// row reuses that parse (the parse depends on the text alone). Bounded: when full, the cache
/// starts again empty.
struct ParsedRowCache {
    private struct Entry {
        /// The stored `accc` text the entry was parsed from.
        let text: [UInt8]
        /// The parsed access control, or nil when the text does not parse.
        let control: AccessControl?
        /// The associated data last computed for this row, and the identity it was for.
        var sealing: (identity: ItemIdentity, associatedData: [UInt8])?
    }

    private var entries: [Int64: Entry] = [:]
    /// Access controls by their stored text, whatever the row: a list of many rows sharing a few
    /// access controls parses each distinct text once.
    private var byText: [[UInt8]: AccessControl?] = [:]
    /// The most entries kept (rows, and distinct texts).
    let capacity: Int

    init(capacity: Int = 4096) { self.capacity = capacity }

    /// The access control stored in `column` of the current row of `row` (item `id`), parsed
    /// at most once per version of the row; nil when the text is missing or does not parse.
    mutating func accessControl(id: Int64, row: SQLiteStatement, column: Int32) -> AccessControl? {
        if let entry = entries[id], row.columnEquals(column, entry.text) { return entry.control }
        guard let text = row.text(column) else {
            entries[id] = nil
            return nil
        }
        let bytes = Array(text.utf8)
        let control: AccessControl?
        if let known = byText[bytes] {
            control = known
        } else {
            control = try? AccessControl(textForm: text)
            if byText.count >= capacity { byText.removeAll(keepingCapacity: true) }
            byText[bytes] = control
        }
        if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
        entries[id] = Entry(text: bytes, control: control)
        return control
    }

    /// The associated data for `fields` of item `id`, rendered once per row version.
    mutating func associatedData(id: Int64, fields: ItemFields) -> [UInt8] {
        guard let entry = entries[id], entry.control == fields.accessControl else {
            return ItemSealing.associatedData(for: fields)
        }
        if let sealing = entry.sealing, sealing.identity == fields.identity { return sealing.associatedData }
        let data = ItemSealing.associatedData(for: fields)
        entries[id]?.sealing = (fields.identity, data)
        return data
    }
}
