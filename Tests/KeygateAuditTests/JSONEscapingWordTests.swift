import Testing

@testable import KeygateAudit

/// Issue 10 point 1 (session 21, wt-group3): the JSON escaper skips eight bytes at a time while
/// none needs an escape. Whatever the position of a character that needs one (in a word, at its
/// edges, in the tail shorter than a word), the bytes are those of escaping one character at a
/// time.
@Suite struct JSONEscapingWordTests {
    /// JSON's escapes of `text`, one Unicode scalar at a time: the rules the escaper promises.
    private static func reference(_ text: String, asciiOnly: Bool) -> [UInt8] {
        var out: [UInt8] = []
        func unicodeEscape(_ unit: UInt16) {
            let hex = String(unit, radix: 16)
            out += Array(("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += Array("\\\"".utf8)
            case "\\": out += Array("\\\\".utf8)
            case "\n": out += Array("\\n".utf8)
            case "\r": out += Array("\\r".utf8)
            case "\t": out += Array("\\t".utf8)
            case _ where scalar.value < 0x20: unicodeEscape(UInt16(scalar.value))
            case _ where scalar.value >= 0x80 && asciiOnly:
                for unit in String(scalar).utf16 { unicodeEscape(unit) }
            default: out += Array(String(scalar).utf8)
            }
        }
        return out
    }

    /// Every character that needs an escape (and some that do not), alone at every position of
    /// plain texts of 0 to 24 bytes, escaped with and without `asciiOnly`.
    @Test(arguments: [false, true])
    func eachEscapeAtEachPositionIsEscapedAsOneCharacterAtATime(asciiOnly: Bool) {
        let specials: [String] = ["\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1F}", "\u{7F}", " ", "é", "€", "😀"]
        for length in 0...24 {
            let plain = String((0..<length).map { Character(UnicodeScalar(UInt8(0x61 + $0 % 26))) })
            #expect(Self.escape(plain, asciiOnly: asciiOnly) == Self.reference(plain, asciiOnly: asciiOnly))
            for position in 0...length {
                for special in specials {
                    var text = plain
                    text.insert(contentsOf: special, at: text.index(text.startIndex, offsetBy: position))
                    #expect(
                        Self.escape(text, asciiOnly: asciiOnly) == Self.reference(text, asciiOnly: asciiOnly),
                        "\(length) bytes, \(special.unicodeScalars.first!.value) at \(position)")
                }
            }
        }
    }

    /// Two characters that need escapes, in neighbouring words and in the same word.
    @Test func escapesInNeighbouringWordsAreAllEscaped() {
        for first in 0..<20 {
            for second in first..<20 {
                var bytes = Array(repeating: UInt8(ascii: "x"), count: 20)
                bytes[first] = UInt8(ascii: "\"")
                bytes[second] = 0x01
                let text = String(decoding: bytes, as: UTF8.self)
                #expect(Self.escape(text, asciiOnly: false) == Self.reference(text, asciiOnly: false))
            }
        }
    }

    private static func escape(_ text: String, asciiOnly: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.appendJSONEscaped(text, asciiOnly: asciiOnly)
        return out
    }
}
