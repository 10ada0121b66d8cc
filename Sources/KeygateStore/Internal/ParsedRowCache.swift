import KeygatePolicy

/// What the SQLite store has already worked out about the access-control texts it reads: each
/// distinct stored text parsed once, and whether it is the canonical text form, so a repeated
/// read neither re-parses nor re-renders text, whichever row it reads.
///
/// The parse depends on the stored text alone, so entries are keyed by that text: a row's text
/// is compared byte for byte in place (no copy) with the few texts read most recently, and
/// looked up among all texts seen only when none of them matches. An edit behind the store's
/// back is a new text, parsed afresh, never hidden. The associated data a value is opened with
/// is built from the record's identity and the text form of its access control, taken from an
/// entry whose parse equals it (rendered only when no entry does). Bounded: the texts seen are
/// at most `capacity`; when full, that table starts again empty. A store's rows share a few
/// access controls, so reading many different rows costs no parse and no allocation here.
struct ParsedRowCache {
    private struct Entry {
        /// The stored `accc` text.
        let text: [UInt8]
        /// The parsed access control, or nil when the text does not parse.
        let control: AccessControl?
        /// The text itself as a string, when it is the parse's canonical text form (what a value
        /// is sealed with).
        let canonical: String?
    }

    /// The texts read most recently, the latest first (compared in place before any lookup).
    private var recent: [Entry] = []
    /// Every text seen, up to `capacity`, by the text as a string (a found entry counts only when
    /// its bytes are the row's: strings compare by canonical equivalence). Keyed by `String`,
    /// whose `Hashable` conformance every process has looked up already, not by `[UInt8]`, whose
    /// run-time lookup (and `UInt8`'s) scanned all the executable's conformances: 0.06 ms of
    /// every process that reads.
    private var byText: [String: Entry] = [:]
    /// The most distinct texts kept.
    let capacity: Int
    /// How many recent texts are compared in place.
    private static let recentCount = 4

    init(capacity: Int = 4096) { self.capacity = capacity }

    /// The access control stored in `column` of the current row of `row`, parsed at most once
    /// per distinct text; nil when the text is missing or does not parse.
    mutating func accessControl(row: SQLiteStatement, column: Int32) -> AccessControl? {
        for index in recent.indices where row.columnEquals(column, recent[index].text) {
            if index > 0 { recent.swapAt(index, 0) }
            return recent[0].control
        }
        guard let text = row.text(column) else { return nil }
        let bytes = Array(text.utf8)
        let entry: Entry
        if let known = byText[text], known.text == bytes {
            entry = known
        } else {
            let control = try? AccessControl(textForm: text)
            entry = Entry(text: bytes, control: control, canonical: control?.textForm == text ? text : nil)
            if byText.count >= capacity { byText.removeAll(keepingCapacity: true) }
            byText[text] = entry
        }
        if recent.count >= Self.recentCount { recent.removeLast() }
        recent.insert(entry, at: 0)
        return entry.control
    }

    /// The associated data for `fields`, from an access-control text already known to render
    /// `fields.accessControl` (rendered afresh when none is).
    func associatedData(fields: ItemFields) -> [UInt8] {
        for entry in recent where entry.canonical != nil && entry.control == fields.accessControl {
            return ItemSealing.associatedData(identity: fields.identity, controlText: entry.canonical!)
        }
        return ItemSealing.associatedData(for: fields)
    }
}
