import KeygateAudit
import Testing

/// The digits the JSON line writers lay out are `String(value)`'s, at every width and sign,
/// including the extremes of 64-bit integers.
@Suite struct DecimalBytesTests {
    @Test(arguments: [0, 1, 9, 10, 99, 100, 101, -1, -9, -10, 1_000_000_000, Int64.max, Int64.min])
    func signedValuesAreTheirDecimalText(_ value: Int64) {
        var bytes: [UInt8] = [UInt8(ascii: "x")]
        bytes.appendDecimal(value)
        #expect(String(decoding: bytes, as: UTF8.self) == "x" + String(value))
    }

    @Test(arguments: [UInt64.max, 10_000_000_000_000_000_000, 9_999_999_999_999_999_999, 18])
    func unsignedValuesAreTheirDecimalText(_ value: UInt64) {
        var bytes: [UInt8] = []
        bytes.appendDecimal(value)
        #expect(String(decoding: bytes, as: UTF8.self) == String(value))
    }
}
