import Keygate
import KeygatePolicy
import KeygateStore
import Testing

@testable import KeygateCLI

/// Issue 10 point 2: `list`'s lines are laid out straight into bytes. For odd names (quotes,
/// backslashes, control characters, DEL, NFC and NFD forms, characters outside the BMP), odd
/// times and many items sharing a few access controls, the bytes are the JSON tree's rendering
/// with every non-ASCII character escaped, as the lines were made before.
@Suite struct ItemJSONWriterTests {
    /// The line as it was made before (also ItemJSONTests' reference): the tree rendered, then each non-ASCII scalar replaced by
    /// `\u` escapes of its UTF-16 units.
    static func reference(_ attributes: ItemAttributes, asciiOnly: Bool) -> String {
        let control = attributes.accessControl
        let json = JSONValue.object([
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
        guard asciiOnly else { return json }
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

    static let oddNames = [
        "", "api", "q\"uote", "back\\slash", "line\nfeed\rreturn\ttab", "nul\u{0}bell\u{7}esc\u{1B}unit\u{1F}",
        "del\u{7F}", "caf\u{E9}", "cafe\u{301}", "\u{1F600} grin", "bmp end \u{FFFD}\u{FFFF}", "last \u{10FFFF}",
        "sep\u{2028}\u{2029}", "\u{80}\u{9F}c1", "mixed \"\u{E9}\\\n\u{1F600}\u{1}",
    ]

    private static func controls() throws -> [AccessControl] {
        [
            try AccessControl(protection: .whenUnlocked),
            try AccessControl(protection: .afterFirstUnlockThisDeviceOnly),
            try AccessControl(protection: .whenUnlocked, flags: [.devicePasscode]),
            try AccessControl(
                protection: .whenUnlockedThisDeviceOnly, flags: [.biometryCurrentSet, .or, .devicePasscode]),
            try AccessControl(protection: .whenUnlocked, flags: [.userPresence]),
            try AccessControl(
                protection: .whenPasscodeSetThisDeviceOnly, flags: [.devicePasscode, .applicationPassword]),
        ]
    }

    private static func items() throws -> [ItemAttributes] {
        let controls = try controls()
        let times: [Int64] = [0, 1_800_000_000_123_456_789, -1_500_000_000, -999_999_999, .max, .min]
        var items: [ItemAttributes] = []
        for (index, name) in oddNames.enumerated() {
            for round in 0..<3 {
                items.append(
                    ItemFields(
                        identity: ItemIdentity(
                            accessGroup: round == 0 ? "keygate" : name,
                            account: oddNames[(index + round) % oddNames.count],
                            service: name, synchronizable: round == 1),
                        label: round == 2 ? nil : name,
                        // Six controls in turn, more than the writer keeps rendered.
                        accessControl: controls[(index * 3 + round) % controls.count],
                        created: Timestamp(nanoseconds: times[(index + round) % times.count]),
                        modified: Timestamp(nanoseconds: times[(index + 2 * round + 1) % times.count])))
            }
        }
        return items
    }

    @Test func linesAreTheEscapedTreeOfEachItem() throws {
        let items = try Self.items()
        var writer = ItemJSONWriter(asciiOnly: true)
        for attributes in items {
            #expect(ItemJSON.line(attributes) == Self.reference(attributes, asciiOnly: true))
            #expect(ItemJSON.render(attributes) == Self.reference(attributes, asciiOnly: false))
            writer.append(attributes, newline: true)
        }
        let expected = items.map { Self.reference($0, asciiOnly: true) + "\n" }.joined()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == expected)
        #expect(writer.bytes.allSatisfy { $0 < 0x80 }, "every line is ASCII")
        writer.removeAll()
        #expect(writer.bytes.isEmpty)
        writer.append(items[4], newline: false)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == Self.reference(items[4], asciiOnly: true))
    }

    /// NFC and NFD spellings stay apart on screen.
    @Test func normalisationFormsStayApart() throws {
        let control = try AccessControl(protection: .whenUnlocked)
        func line(_ service: String) -> String {
            ItemJSON.line(
                ItemFields(
                    identity: ItemIdentity(accessGroup: "g", account: "a", service: service),
                    accessControl: control, created: Timestamp(seconds: 1), modified: Timestamp(seconds: 1)))
        }
        #expect(line("caf\u{E9}").contains(#""service": "caf\u00e9""#))
        #expect(line("cafe\u{301}").contains(#""service": "cafe\u0301""#))
        #expect(line("\u{1F600}").contains(#""service": "\ud83d\ude00""#))
    }
}
