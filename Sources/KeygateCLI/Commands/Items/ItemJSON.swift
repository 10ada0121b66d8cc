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
        if json.utf8.allSatisfy({ $0 < 0x80 }) { return json }
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

    private static func render(_ attributes: ItemAttributes) -> String {
        let control = attributes.accessControl
        return JSONValue.object([
            JSONMember("service", .string(attributes.identity.service)),
            JSONMember("account", .string(attributes.identity.account)),
            JSONMember("accessGroup", .string(attributes.identity.accessGroup)),
            JSONMember("synchronizable", .bool(attributes.identity.synchronizable)),
            JSONMember("label", attributes.label.map { .string($0) } ?? .null),
            JSONMember("accessible", .string(control.protection.name)),
            JSONMember("accessControl", control.flags.isEmpty ? .null : .string(control.flags.description)),
            JSONMember("text", .string(control.textForm)),
            JSONMember("created", .number(String(attributes.created.nanoseconds / 1_000_000_000))),
            JSONMember("modified", .number(String(attributes.modified.nanoseconds / 1_000_000_000))),
        ]).rendered
    }
}
