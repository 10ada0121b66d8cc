import KeygatePolicy

/// What the SQLite store has already worked out about the access-control texts it reads: each
/// distinct stored text parsed once, so a repeated read neither re-parses nor copies text,
/// whichever row it reads.
///
/// The parse depends on the stored text alone, so entries are keyed by that text: a row's text
/// is compared byte for byte in place (no copy) with the few texts read most recently, and
/// looked up among all texts seen only when none of them matches. An edit behind the store's
/// back is a new text, parsed afresh, never hidden. The text itself is handed back with the
/// parse (one shared string per distinct text), for the record to carry: a value is opened with
/// the text its row holds. Bounded: the texts seen are
/// at most `capacity`; when full, that table starts again empty. A store's rows share a few
/// access controls, so reading many different rows costs no parse and no allocation here.
struct ParsedRowCache {
    private typealias Entry = StoredAccessControl

    /// The texts read most recently, the latest first (compared in place before any lookup).
    private var recent: [Entry] = []
    /// Every text seen, up to `capacity`, by the text as a string (a found entry counts only when
    /// its bytes are the row's: strings compare by canonical equivalence). Keyed by `String`,
    /// whose `Hashable` conformance every process has looked up already, not by `[UInt8]`, whose
    /// run-time lookup (and `UInt8`'s) scans all the executable's conformances at first use (the
    /// `keygate get` rows of `make bench` measure a process that reads).
    private var byText: [String: Entry] = [:]
    /// The most distinct texts kept.
    let capacity: Int
    /// How many recent texts are compared in place.
    private static let recentCount = 4

    init(capacity: Int = 4096) { self.capacity = capacity }

    /// The access control stored in `column` of the current row of `row`, parsed at most once
    /// per distinct text; nil when the text is missing.
    mutating func accessControl(row: SQLiteStatement, column: Int32) -> StoredAccessControl? {
        for index in recent.indices where row.columnEquals(column, recent[index].bytes) {
            if index > 0 { recent.swapAt(index, 0) }
            return recent[0]
        }
        guard let text = row.text(column) else { return nil }
        let bytes = Array(text.utf8)
        let entry: Entry
        if let known = byText[text], known.bytes == bytes {
            entry = known
        } else {
            entry = Entry(text: text, bytes: bytes, control: try? AccessControl(textForm: text))
            if byText.count >= capacity { byText.removeAll(keepingCapacity: true) }
            byText[text] = entry
        }
        if recent.count >= Self.recentCount { recent.removeLast() }
        recent.insert(entry, at: 0)
        return entry
    }
}

/// An access-control text as a row holds it, and its parse: one object per distinct text,
/// shared by every record read with it, which carries it (``SealedValue/encrypted(nonce:ciphertext:stored:)``)
/// so the value opens with the text it was sealed with, for exactly the control it parses to.
package final class StoredAccessControl: Sendable {
    /// The text.
    let text: String
    /// Its bytes, compared in place with a row's.
    let bytes: [UInt8]
    /// The parsed access control, nil when the text does not parse.
    let control: AccessControl?

    init(text: String, bytes: [UInt8]? = nil, control: AccessControl?) {
        self.text = text
        self.bytes = bytes ?? Array(text.utf8)
        self.control = control
    }
}
