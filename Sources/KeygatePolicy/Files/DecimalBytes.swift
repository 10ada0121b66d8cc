extension Array where Element == UInt8 {
    /// Appends `value` in decimal ASCII digits (a leading `-` when negative), with no `String`
    /// made for it: what the JSON line writers (the audit trail's, `keygate list`'s) lay out.
    @inlinable public mutating func appendDecimal(_ value: some BinaryInteger) {
        if value < 0 { append(UInt8(ascii: "-")) }
        var magnitude = UInt64(value.magnitude)
        // Lowest digit first (a division by the constant 10 is a multiplication), then the
        // digits just appended are put in order in place.
        let start = endIndex
        repeat {
            append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        self[start...].reverse()
    }
}
