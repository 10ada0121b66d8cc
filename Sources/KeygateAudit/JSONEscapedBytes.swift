extension Array where Element == UInt8 {
    /// Appends `text` with JSON's escapes (RFC 8259), without quotes: `"`, `\`, `\n`, `\r`,
    /// `\t`, other C0 characters as `\u00xx`; with `asciiOnly`, every non-ASCII character as
    /// `\u` escapes of its UTF-16 units too (lowercase hex), otherwise verbatim UTF-8. Runs that
    /// need no escape are copied whole. What the audit trail's lines and `keygate list`'s lines
    /// both lay out.
    package mutating func appendJSONEscaped(_ text: String, asciiOnly: Bool = false) {
        let contiguous: Void? = text.utf8.withContiguousStorageIfAvailable { escaped($0, asciiOnly: asciiOnly) }
        if contiguous == nil { Array(text.utf8).withUnsafeBufferPointer { escaped($0, asciiOnly: asciiOnly) } }
    }

    /// Appends the UTF-8 `text` with JSON's escapes: runs that need none are copied whole.
    private mutating func escaped(_ text: UnsafeBufferPointer<UInt8>, asciiOnly: Bool) {
        var start = 0
        var index = 0
        while index < text.count {
            let byte = text[index]
            if byte >= 0x20 && byte != 0x22 && byte != 0x5C && (byte < 0x80 || !asciiOnly) {
                index += 1
                continue
            }
            append(contentsOf: UnsafeBufferPointer(rebasing: text[start..<index]))
            if byte < 0x80 {
                switch byte {
                case 0x22: escape(0x22)
                case 0x5C: escape(0x5C)
                case 0x0A: escape(UInt8(ascii: "n"))
                case 0x0D: escape(UInt8(ascii: "r"))
                case 0x09: escape(UInt8(ascii: "t"))
                default: unicodeEscape(UInt16(byte))
                }
                index += 1
            } else {
                index = escapeScalar(in: text, at: index)
            }
            start = index
        }
        append(contentsOf: UnsafeBufferPointer(rebasing: text[start..<index]))
    }

    /// Appends the non-ASCII scalar whose UTF-8 sequence starts at `index` of `text` as `\u`
    /// escapes of its UTF-16 units; returns the index after the sequence. (A `String`'s bytes
    /// are valid UTF-8.)
    private mutating func escapeScalar(in text: UnsafeBufferPointer<UInt8>, at index: Int) -> Int {
        let lead = text[index]
        let length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2
        var value = UInt32(lead) & (length == 4 ? 0x07 : length == 3 ? 0x0F : 0x1F)
        for offset in 1..<length where index + offset < text.count {
            value = value << 6 | UInt32(text[index + offset] & 0x3F)
        }
        if value > 0xFFFF {
            let rest = value - 0x10000
            unicodeEscape(UInt16(0xD800 + (rest >> 10)))
            unicodeEscape(UInt16(0xDC00 + (rest & 0x3FF)))
        } else {
            unicodeEscape(UInt16(value))
        }
        return index + length
    }

    /// Appends `\u` and `unit` as four lowercase hex digits.
    private mutating func unicodeEscape(_ unit: UInt16) {
        let digits: StaticString = "0123456789abcdef"
        escape(UInt8(ascii: "u"))
        digits.withUTF8Buffer { hex in
            for shift in stride(from: 12, through: 0, by: -4) {
                append(hex[Int((unit >> UInt16(shift)) & 0xF)])
            }
        }
    }

    /// Appends a backslash and `letter`.
    private mutating func escape(_ letter: UInt8) {
        append(0x5C)
        append(letter)
    }
}
