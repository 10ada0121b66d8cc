import KeygateItems
public import KeygatePolicy

/// Writes the SSH wire encoding (RFC 4251 §5): big-endian integers, length-prefixed strings,
/// mpints.
public struct SSHWireWriter: Sendable {
    /// What was written.
    public private(set) var output: [UInt8] = []

    /// An empty writer.
    public init() {}

    /// A byte.
    public mutating func byte(_ value: UInt8) { output.append(value) }

    /// A `uint32`.
    public mutating func uint32(_ value: UInt32) {
        output += [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }

    /// A `string` of bytes.
    public mutating func bytes(_ value: some Collection<UInt8>) {
        uint32(UInt32(value.count))
        output += value
    }

    /// A `string` of UTF-8 text.
    public mutating func string(_ value: String) { bytes(Array(value.utf8)) }

    /// An `mpint` of the unsigned big-endian `magnitude`: leading zeros dropped, a zero byte
    /// put in front when the top bit is set.
    public mutating func mpint(_ magnitude: some Collection<UInt8>) {
        var trimmed = Array(magnitude.drop { $0 == 0 })
        if let first = trimmed.first, first & 0x80 != 0 { trimmed.insert(0, at: 0) }
        bytes(trimmed)
    }
}

/// Reads the SSH wire encoding; every read is bounded by what is left, and names the field
/// that did not fit.
public struct SSHWireReader: Sendable {
    private let input: [UInt8]
    private var offset = 0

    /// A reader of `input`.
    public init(_ input: [UInt8]) { self.input = input }

    /// Whether everything was read.
    public var isAtEnd: Bool { offset == input.count }

    /// Bytes not yet read.
    public var remaining: Int { input.count - offset }

    /// A byte.
    /// - Throws: `errSecParam` naming `field` when the input ends first.
    public mutating func byte(_ field: String) throws(KeygateError) -> UInt8 {
        guard offset < input.count else { throw Self.short(field) }
        defer { offset += 1 }
        return input[offset]
    }

    /// A `uint32`.
    /// - Throws: `errSecParam` naming `field` when the input ends first.
    public mutating func uint32(_ field: String) throws(KeygateError) -> UInt32 {
        guard remaining >= 4 else { throw Self.short(field) }
        defer { offset += 4 }
        return input[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// A `string` of bytes.
    /// - Throws: `errSecParam` naming `field` when its length runs past the input.
    public mutating func bytes(_ field: String) throws(KeygateError) -> [UInt8] {
        let length = Int(try uint32(field))
        guard length <= remaining else {
            throw KeygateError(.param, "\(field): a length of \(length) bytes runs past the \(remaining) left")
        }
        defer { offset += length }
        return Array(input[offset..<offset + length])
    }

    /// A `string` that must be UTF-8 text.
    /// - Throws: `errSecParam` naming `field` when it is cut short or not UTF-8.
    public mutating func string(_ field: String) throws(KeygateError) -> String {
        let raw = try bytes(field)
        guard let text = String(validating: raw, as: UTF8.self) else {
            throw KeygateError(.param, "\(field) is not valid UTF-8")
        }
        return text
    }

    /// The next mpint's magnitude (positive, leading zeros dropped), `field` naming it.
    /// - Throws: `errSecParam` naming `field` when it is cut short or negative.
    mutating func mpint(_ field: String) throws(KeygateError) -> [UInt8] {
        let bytes = try self.bytes(field)
        guard let first = bytes.first else { return [] }
        guard first & 0x80 == 0 else { throw KeygateError(.param, "\(field) is a negative mpint") }
        return Array(bytes.drop { $0 == 0 })
    }

    private static func short(_ field: String) -> KeygateError {
        KeygateError(.param, "\(field): the message ends before it")
    }
}
