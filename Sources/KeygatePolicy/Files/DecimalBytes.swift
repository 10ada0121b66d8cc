extension Array where Element == UInt8 {
    /// Appends `value` in decimal ASCII digits (a leading `-` when negative), with no `String`
    /// made for it: what the JSON line writers (the audit trail's, `keygate list`'s) lay out.
    @inlinable public mutating func appendDecimal(_ value: some BinaryInteger) {
        if value < 0 { append(UInt8(ascii: "-")) }
        var magnitude = UInt64(value.magnitude)
        // The largest power of ten not above the value (never overflows: it only grows while
        // ten times it is still at most the value).
        var divisor: UInt64 = 1
        while magnitude / divisor >= 10 { divisor *= 10 }
        repeat {
            append(UInt8(ascii: "0") + UInt8(magnitude / divisor))
            magnitude %= divisor
            divisor /= 10
        } while divisor > 0
    }
}
