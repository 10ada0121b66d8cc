import Keygate
import KeygateAudit
import KeygatePolicy

/// Lays out `keygate list`'s JSON lines straight into bytes: one growing buffer for many
/// items, no `String` built per item or per member.
///
/// The text is exactly what ``ItemJSON/render(_:)`` describes (the members in that order, strings
/// escaped as ``KeygatePolicy/JSONValue`` escapes them: `"`, `\`, `\n`, `\r`, `\t`, and other
/// C0 characters as `\u00xx`). With `asciiOnly`, every non-ASCII character is written as
/// `\uxxxx` escapes of its UTF-16 units (lowercase hex), as ``ItemJSON/line(_:)`` promises. The members an access control gives (`accessible`, `accessControl`, `text`) are
/// rendered once per distinct access control and copied for the items that share it.
struct ItemJSONWriter {
    /// The text laid out so far.
    private(set) var bytes: [UInt8] = []
    /// Whether non-ASCII characters are escaped.
    let asciiOnly: Bool
    /// The access-control members rendered most recently, the latest first.
    private var controls: [(control: AccessControl, text: [UInt8])] = []
    /// How many rendered access controls are kept.
    private static let controlCount = 4

    /// An empty writer; `capacity` bytes are reserved.
    init(asciiOnly: Bool, capacity: Int = 0) {
        self.asciiOnly = asciiOnly
        bytes.reserveCapacity(capacity)
    }

    /// Appends `attributes`' JSON object, then a newline when `newline` is set. (A string's
    /// quotes go out with the text around them: fewer, longer copies.)
    mutating func append(_ attributes: ItemAttributes, newline: Bool) {
        let identity = attributes.identity
        literal(#"{"service": ""#)
        escaped(identity.service)
        literal(#"", "account": ""#)
        escaped(identity.account)
        literal(#"", "accessGroup": ""#)
        escaped(identity.accessGroup)
        literal(
            identity.synchronizable
                ? #"", "synchronizable": true, "label": "# : #"", "synchronizable": false, "label": "#)
        if let label = attributes.label { quoted(label) } else { literal("null") }
        controlMembers(attributes.accessControl)
        literal(#", "created": "#)
        decimal(attributes.created.nanoseconds / 1_000_000_000)
        literal(#", "modified": "#)
        decimal(attributes.modified.nanoseconds / 1_000_000_000)
        literal(newline ? "}\n" : "}")
    }

    /// Empties the buffer, keeping its capacity (after its bytes were written out).
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
    }

    // MARK: - Members

    /// `, "accessible": …, "accessControl": …, "text": …` for `control`: copied when it was
    /// rendered for a recent item, rendered (and kept) otherwise.
    private mutating func controlMembers(_ control: AccessControl) {
        for index in controls.indices where controls[index].control == control {
            if index > 0 { controls.swapAt(index, 0) }
            bytes.append(contentsOf: controls[0].text)
            return
        }
        let start = bytes.count
        literal(#", "accessible": "#)
        quoted(control.protection.name)
        literal(#", "accessControl": "#)
        if control.flags.isEmpty { literal("null") } else { quoted(control.flags.description) }
        literal(#", "text": "#)
        quoted(control.textForm)
        if controls.count >= Self.controlCount { controls.removeLast() }
        controls.insert((control, Array(bytes[start...])), at: 0)
    }

    // MARK: - Text

    /// Appends ASCII text that needs no escaping (the keys and punctuation).
    private mutating func literal(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends `text` as a JSON string.
    private mutating func quoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        escaped(text)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends `text` with JSON's escapes, without quotes.
    private mutating func escaped(_ text: String) { bytes.appendJSONEscaped(text, asciiOnly: asciiOnly) }

    /// Appends `value` in decimal.
    private mutating func decimal(_ value: Int64) { bytes.appendDecimal(value) }
}
