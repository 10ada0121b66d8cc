import Keygate

/// The JSON line `keygate list` prints for an item: attributes only.
///
/// Names are bytes, never normalised (as Apple compares them), so `caf\u{E9}` (NFC) and
/// `cafe\u{301}` (NFD) are two items. Every non-ASCII character is written as a `\uXXXX`
/// escape, so the two forms look different on screen while any JSON reader gets the exact
/// string back. A list lays its lines out with ``ItemJSONWriter``, straight into bytes.
enum ItemJSON {
    /// The line for `attributes` (no newline), every non-ASCII character escaped.
    static func line(_ attributes: ItemAttributes) -> String {
        text(attributes, asciiOnly: true)
    }

    /// The attributes as one JSON object, non-ASCII characters as they are: the same text as
    /// ``KeygatePolicy/JSONValue/rendered`` gives for these members in this order.
    static func render(_ attributes: ItemAttributes) -> String {
        text(attributes, asciiOnly: false)
    }

    private static func text(_ attributes: ItemAttributes, asciiOnly: Bool) -> String {
        var writer = ItemJSONWriter(asciiOnly: asciiOnly, capacity: 256)
        writer.append(attributes, newline: false)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
