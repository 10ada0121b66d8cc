import KeygateItems
public import KeygatePolicy

/// A P-256 ECDSA signature, in the two forms Apple gives it: DER X9.62 `SEQUENCE { INTEGER r,
/// INTEGER s }` (`SecKeyCreateSignature`, at most 72 bytes, spec §9.9.3) and `r‖s` (CryptoKit's
/// `rawRepresentation`, 64 bytes, §9.10.6).
public struct ECDSASignature: Hashable, Sendable {
    /// `r`, 32 bytes big-endian.
    public let r: [UInt8]
    /// `s`, 32 bytes big-endian.
    public let s: [UInt8]

    /// The signature in DER.
    /// - Throws: `errSecParam` when `der` is not exactly one DER sequence of two positive
    ///   integers of at most 32 significant bytes each.
    public init(der: [UInt8]) throws(KeygateError) {
        var offset = 0
        func fail(_ why: String) -> KeygateError { KeygateError(.param, "an ECDSA signature in DER: \(why)") }
        func take(_ count: Int) throws(KeygateError) -> ArraySlice<UInt8> {
            guard count >= 0, offset + count <= der.count else { throw fail("it ends early") }
            defer { offset += count }
            return der[offset..<offset + count]
        }
        func header(_ tag: UInt8) throws(KeygateError) -> Int {
            guard try take(1).first == tag else { throw fail("tag \(tag) expected") }
            let length = Int(try take(1).first!)
            guard length < 0x80 else { throw fail("a long length form") }
            return length
        }
        func integer() throws(KeygateError) -> [UInt8] {
            let body = Array(try take(try header(0x02)))
            guard let first = body.first, first & 0x80 == 0 else { throw fail("a negative or empty integer") }
            if body.count > 1 && first == 0 && body[1] & 0x80 == 0 { throw fail("an integer not minimally encoded") }
            let magnitude = Array(body.drop { $0 == 0 })
            guard magnitude.count <= 32 else { throw fail("an integer longer than 32 bytes") }
            return [UInt8](repeating: 0, count: 32 - magnitude.count) + magnitude
        }
        let length = try header(0x30)
        guard offset + length == der.count else { throw fail("bytes after the sequence") }
        r = try integer()
        s = try integer()
        guard offset == der.count else { throw fail("bytes after the two integers") }
    }

    /// A signature from `r‖s` (64 bytes).
    /// - Throws: `errSecParam` for another length.
    public init(rawRepresentation raw: [UInt8]) throws(KeygateError) {
        guard raw.count == 64 else { throw KeygateError(.param, "a raw P-256 signature is 64 bytes, not \(raw.count)") }
        r = Array(raw[0..<32])
        s = Array(raw[32..<64])
    }

    /// `r‖s`.
    public var rawRepresentation: [UInt8] { r + s }

    /// The DER form.
    public var derRepresentation: [UInt8] { DER.sequence(DER.integer(r), DER.integer(s)) }
}
