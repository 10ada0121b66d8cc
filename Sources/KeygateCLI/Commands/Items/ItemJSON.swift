import Keygate
import KeygatePolicy
import KeygateStore

/// The JSON line `keygate list` prints for an item: attributes only.
///
/// Names are bytes, never normalised (as Apple compares them), so `caf\u{E9}` (NFC) and
/// `cafe\u{301}` (NFD) are two items. Every non-ASCII character is written as a `\uXXXX`
/// escape, so the two forms look different on screen while any JSON reader gets the exact
/// string back.
enum ItemJSON {
    static func line(_ attributes: ItemAttributes) -> String {
        asciiOnly(render(attributes))
    }

    /// JSON text with every non-ASCII character escaped (UTF-16 units, as JSON spells them).
    /// Outside strings JSON text is ASCII, so only string contents change.
    static func asciiOnly(_ json: String) -> String {
        // Most lines are ASCII already: returned as they are, without a copy.
        // (A scan of the contiguous bytes, a tight loop, not the view's iterator.)
        let ascii: (UInt8) -> Bool = { $0 < 0x80 }
        if json.utf8.withContiguousStorageIfAvailable({ $0.allSatisfy(ascii) }) ?? json.utf8.allSatisfy(ascii) {
            return json
        }
        var out = ""
        for scalar in json.unicodeScalars {
            if scalar.isASCII {
                out.unicodeScalars.append(scalar)
                continue
            }
            for unit in String(scalar).utf16 {
                let hex = String(unit, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return out
    }

    /// The attributes as one JSON object, laid out straight into text (a list renders one per
    /// item): the same text as ``JSONValue/rendered`` gives for these members in this order.
    static func render(_ attributes: ItemAttributes) -> String {
        let control = attributes.accessControl
        var out = ""
        out.reserveCapacity(256)
        func member(_ key: String, _ text: String?, first: Bool = false) {
            out += first ? "{\"" : ", \""
            out += key
            out += "\": "
            if let text { JSONValue.appendQuoted(text, to: &out) } else { out += "null" }
        }
        member("service", attributes.identity.service, first: true)
        member("account", attributes.identity.account)
        member("accessGroup", attributes.identity.accessGroup)
        out += #", "synchronizable": "# + (attributes.identity.synchronizable ? "true" : "false")
        member("label", attributes.label)
        member("accessible", control.protection.name)
        member("accessControl", control.flags.isEmpty ? nil : control.flags.description)
        member("text", control.textForm)
        out += #", "created": "# + String(attributes.created.nanoseconds / 1_000_000_000)
        out += #", "modified": "# + String(attributes.modified.nanoseconds / 1_000_000_000)
        out += "}"
        return out
    }
}
