import Testing

@testable import KeygatePolicy

/// The length-prefix encoding is what every sealed item's associated data is made of: its
/// bytes may never change (a stored value would no longer open). Session 22 appends each part
/// from contiguous UTF-8 instead of the string's UTF-8 view; these pin the bytes.
@Suite struct LengthPrefixedEncoderTests {
    @Test func encodesTheTagThenEachPartAsABigEndianLengthAndItsBytes() {
        var encoder = LengthPrefixedEncoder(tag: "t.v1", capacity: 4)
        encoder.append("ab")
        encoder.append("")
        encoder.append("é")
        #expect(
            encoder.bytes == [
                0x74, 0x2E, 0x76, 0x31, 0,
                0, 0, 0, 2, 0x61, 0x62,
                0, 0, 0, 0,
                0, 0, 0, 2, 0xC3, 0xA9,
            ])
    }

    /// A part longer than a small string (stored natively) and one past 255 bytes (a length
    /// with more than one non-zero byte) encode as the bytes of their UTF-8 view do.
    @Test(arguments: [20, 300])
    func aLongPartIsItsLengthThenItsUTF8(_ length: Int) {
        let part = String(repeating: "k", count: length - 1) + "ü"
        var encoder = LengthPrefixedEncoder(tag: "keygate.item.v1")
        encoder.append(part)
        let count = UInt32(part.utf8.count)
        let expected =
            Array("keygate.item.v1".utf8) + [0]
            + [UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)]
            + Array(part.utf8)
        #expect(encoder.bytes == expected)
    }
}
