extension Array where Element == UInt8 {
    /// Appends `value` in decimal ASCII digits (a leading `-` when negative), with no `String`
    /// made for it: what the JSON line writers (the audit trail's, `keygate list`'s) lay out.
    @inlinable public mutating func appendDecimal(_ value: some BinaryInteger) {
        if value < 0 { append(UInt8(ascii: "-")) }
        var magnitude = UInt64(value.magnitude)
        // At most 20 digits, laid out from the end of a small stack buffer.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }
}
