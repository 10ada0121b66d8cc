/// The few DER encodings Keygate writes to hand public keys and signatures to libcrypto:
/// definite lengths in their shortest form, integers minimally encoded and positive.
enum DER {
    /// A tag, its length and `content`.
    static func element(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        [tag] + length(content.count) + content
    }

    /// `SEQUENCE { elements… }`.
    static func sequence(_ elements: [UInt8]...) -> [UInt8] { element(0x30, elements.flatMap { $0 }) }

    /// A positive `INTEGER` of big-endian `magnitude` (leading zeros dropped, a zero byte put
    /// in front when the high bit is set).
    static func integer(_ magnitude: some Collection<UInt8>) -> [UInt8] {
        var body = Array(magnitude.drop { $0 == 0 })
        if body.isEmpty || body[0] & 0x80 != 0 { body.insert(0, at: 0) }
        return element(0x02, body)
    }

    /// A `BIT STRING` of whole bytes.
    static func bitString(_ bytes: [UInt8]) -> [UInt8] { element(0x03, [0] + bytes) }

    /// `NULL`.
    static let null: [UInt8] = [0x05, 0x00]

    private static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var rest = count
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xff), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }
}
