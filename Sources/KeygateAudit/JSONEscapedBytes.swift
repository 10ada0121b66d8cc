extension Array where Element == UInt8 {
    /// Appends `text` with JSON's escapes (RFC 8259), without quotes: `"`, `\`, `\n`, `\r`,
    /// `\t`, other C0 characters as `\u00xx`; with `asciiOnly`, every non-ASCII character as
    /// `\u` escapes of its UTF-16 units too (lowercase hex), otherwise verbatim UTF-8. Runs that
    /// need no escape are copied whole. What the audit trail's lines and `keygate list`'s lines
    /// both lay out.
    package mutating func appendJSONEscaped(_ text: String, asciiOnly: Bool = false) {
        JSONEscaping.write(text, asciiOnly: asciiOnly, to: &self)
    }

    /// Appends `value` in decimal ASCII digits (a leading `-` when negative), with no `String`
    /// made for it: what the audit trail's lines and `keygate list`'s lines both lay out.
    package mutating func appendDecimal(_ value: some BinaryInteger) { writeDecimal(value) }
}

/// Where a JSON line's escaped strings (``JSONEscaping``) and numbers (``writeDecimal(_:)``)
/// go: a byte array, or an audit line's raw cursor.
protocol JSONLineOutput {
    /// Writes `bytes` as they are.
    mutating func writeRun(_ bytes: UnsafeBufferPointer<UInt8>)
    /// Writes one byte.
    mutating func writeByte(_ byte: UInt8)
}

extension JSONLineOutput {
    /// Writes `value`'s decimal digits (a minus sign first when negative): lowest digits first
    /// into a small stack buffer, two at a time from a table of the hundred pairs (a division by
    /// the constant 100 is a multiplication; a time in nanoseconds is 19 digits), then written
    /// in order.
    mutating func writeDecimal(_ value: some BinaryInteger) {
        if value < 0 { writeByte(UInt8(ascii: "-")) }
        var magnitude = UInt64(value.magnitude)
        let table: StaticString = """
            0001020304050607080910111213141516171819202122232425262728293031323334\
            3536373839404142434445464748495051525354555657585960616263646566676869\
            707172737475767778798081828384858687888990919293949596979899
            """
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var index = 20
            let pairs = table.utf8Start
            while magnitude >= 100 {
                let pair = Int(truncatingIfNeeded: magnitude % 100) &* 2
                magnitude /= 100
                index &-= 2
                digits[index] = pairs[pair]
                digits[index &+ 1] = pairs[pair &+ 1]
            }
            if magnitude >= 10 {
                let pair = Int(truncatingIfNeeded: magnitude) &* 2
                index &-= 2
                digits[index] = pairs[pair]
                digits[index &+ 1] = pairs[pair &+ 1]
            } else {
                index &-= 1
                digits[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude)
            }
            writeRun(UnsafeBufferPointer(rebasing: digits[index...]))
        }
    }
}

extension Array: JSONLineOutput where Element == UInt8 {
    mutating func writeRun(_ bytes: UnsafeBufferPointer<UInt8>) { append(contentsOf: bytes) }
    mutating func writeByte(_ byte: UInt8) { append(byte) }
}

extension LineCursor: JSONLineOutput {
    @inline(__always) mutating func writeRun(_ bytes: UnsafeBufferPointer<UInt8>) { write(bytes) }
    @inline(__always) mutating func writeByte(_ byte: UInt8) { write(byte) }
}

/// JSON's string escapes (RFC 8259), the one implementation behind both line writers.
enum JSONEscaping {
    /// Writes `text` to `output` with JSON's escapes, without quotes (see
    /// `Array.appendJSONEscaped(_:asciiOnly:)`).
    @inline(__always)
    static func write(_ text: String, asciiOnly: Bool, to output: inout some JSONLineOutput) {
        let contiguous: Void? = text.utf8.withContiguousStorageIfAvailable {
            escaped($0, asciiOnly: asciiOnly, to: &output)
        }
        if contiguous == nil {
            Array(text.utf8).withUnsafeBufferPointer { escaped($0, asciiOnly: asciiOnly, to: &output) }
        }
    }

    /// Writes the UTF-8 `text` with JSON's escapes: runs that need none are copied whole, and
    /// found eight bytes at a time.
    private static func escaped(
        _ text: UnsafeBufferPointer<UInt8>, asciiOnly: Bool, to output: inout some JSONLineOutput
    ) {
        var start = 0
        var index = 0
        while index < text.count {
            if index + 8 <= text.count, let base = text.baseAddress,
                !needsEscape(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self), asciiOnly: asciiOnly)
            {
                index += 8
                continue
            }
            let byte = text[index]
            if byte >= 0x20 && byte != 0x22 && byte != 0x5C && (byte < 0x80 || !asciiOnly) {
                index += 1
                continue
            }
            output.writeRun(UnsafeBufferPointer(rebasing: text[start..<index]))
            if byte < 0x80 {
                switch byte {
                case 0x22: escape(0x22, to: &output)
                case 0x5C: escape(0x5C, to: &output)
                case 0x0A: escape(UInt8(ascii: "n"), to: &output)
                case 0x0D: escape(UInt8(ascii: "r"), to: &output)
                case 0x09: escape(UInt8(ascii: "t"), to: &output)
                default: unicodeEscape(UInt16(byte), to: &output)
                }
                index += 1
            } else {
                index = escapeScalar(in: text, at: index, to: &output)
            }
            start = index
        }
        output.writeRun(UnsafeBufferPointer(rebasing: text[start..<index]))
    }

    /// Whether any of the eight bytes in `word` needs an escape: one below 0x20, a `"`, a `\`,
    /// or (with `asciiOnly`) one of 0x80 or more. Each test is the classic "has a byte less
    /// than n" bit trick, exact as a yes or no (it may not tell which byte).
    @inline(__always)
    private static func needsEscape(_ word: UInt64, asciiOnly: Bool) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let control = (word &- ones &* 0x20) & ~word
        let quotes = (quote &- ones) & ~quote
        let backslashes = (backslash &- ones) & ~backslash
        let nonASCII = asciiOnly ? word : 0
        return (control | quotes | backslashes | nonASCII) & highs != 0
    }

    /// Writes the non-ASCII scalar whose UTF-8 sequence starts at `index` of `text` as `\u`
    /// escapes of its UTF-16 units; returns the index after the sequence. (A `String`'s bytes
    /// are valid UTF-8.)
    private static func escapeScalar(
        in text: UnsafeBufferPointer<UInt8>, at index: Int, to output: inout some JSONLineOutput
    ) -> Int {
        let lead = text[index]
        let length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2
        var value = UInt32(lead) & (length == 4 ? 0x07 : length == 3 ? 0x0F : 0x1F)
        for offset in 1..<length where index + offset < text.count {
            value = value << 6 | UInt32(text[index + offset] & 0x3F)
        }
        if value > 0xFFFF {
            let rest = value - 0x10000
            unicodeEscape(UInt16(0xD800 + (rest >> 10)), to: &output)
            unicodeEscape(UInt16(0xDC00 + (rest & 0x3FF)), to: &output)
        } else {
            unicodeEscape(UInt16(value), to: &output)
        }
        return index + length
    }

    /// Writes `\u` and `unit` as four lowercase hex digits.
    private static func unicodeEscape(_ unit: UInt16, to output: inout some JSONLineOutput) {
        let digits: StaticString = "0123456789abcdef"
        escape(UInt8(ascii: "u"), to: &output)
        digits.withUTF8Buffer { hex in
            for shift in stride(from: 12, through: 0, by: -4) {
                output.writeByte(hex[Int((unit >> UInt16(shift)) & 0xF)])
            }
        }
    }

    /// Writes a backslash and `letter`.
    private static func escape(_ letter: UInt8, to output: inout some JSONLineOutput) {
        output.writeByte(0x5C)
        output.writeByte(letter)
    }
}
