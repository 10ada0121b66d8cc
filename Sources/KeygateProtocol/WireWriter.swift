import KeygateItems

/// Builds a payload from the protocol's field types (see README.md, "Field encoding").
struct WireWriter {
    private(set) var bytes: [UInt8] = []

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    mutating func uint32(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }

    mutating func int32(_ value: Int32) { uint32(UInt32(bitPattern: value)) }

    mutating func int64(_ value: Int64) {
        let raw = UInt64(bitPattern: value)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: raw >> shift)) }
    }

    mutating func data(_ value: some Collection<UInt8>) {
        uint32(UInt32(value.count))
        bytes.append(contentsOf: value)
    }

    mutating func string(_ value: String) { data(Array(value.utf8)) }

    mutating func secret(_ value: SecretData) {
        uint32(UInt32(value.count))
        value.withUnsafeBytes { bytes.append(contentsOf: $0) }
    }

    /// 0 for nil, else 1 and the value.
    mutating func optional<T>(_ value: T?, _ write: (inout WireWriter, T) -> Void) {
        guard let value else { return byte(0) }
        byte(1)
        write(&self, value)
    }

    mutating func strings(_ values: [String]) {
        uint32(UInt32(values.count))
        for value in values { string(value) }
    }

    mutating func pairs(_ values: [String: String]) {
        uint32(UInt32(values.count))
        for key in values.keys.sorted() {
            string(key)
            string(values[key]!)
        }
    }
}

/// Reads a payload field by field; every read checks the bytes left first, so a length field
/// can never make it read past the payload or allocate more than the payload holds.
struct WireReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var remaining: Int { bytes.count - offset }

    mutating func byte(_ field: String) throws(ProtocolError) -> UInt8 {
        guard remaining >= 1 else { throw .malformed("\(field): payload ends early") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func bool(_ field: String) throws(ProtocolError) -> Bool {
        switch try byte(field) {
        case 0: return false
        case 1: return true
        default: throw .malformed("\(field): a boolean must be 0 or 1")
        }
    }

    mutating func uint32(_ field: String) throws(ProtocolError) -> UInt32 {
        guard remaining >= 4 else { throw .malformed("\(field): payload ends early") }
        var value: UInt32 = 0
        for index in offset..<(offset + 4) { value = value << 8 | UInt32(bytes[index]) }
        offset += 4
        return value
    }

    mutating func int32(_ field: String) throws(ProtocolError) -> Int32 { Int32(bitPattern: try uint32(field)) }

    mutating func int64(_ field: String) throws(ProtocolError) -> Int64 {
        guard remaining >= 8 else { throw .malformed("\(field): payload ends early") }
        var value: UInt64 = 0
        for index in offset..<(offset + 8) { value = value << 8 | UInt64(bytes[index]) }
        offset += 8
        return Int64(bitPattern: value)
    }

    /// A count of following elements, each at least `minimumElementSize` bytes: checked against
    /// the bytes left before anything is allocated.
    mutating func count(_ field: String, minimumElementSize: Int) throws(ProtocolError) -> Int {
        let count = Int(try uint32(field))
        guard count <= remaining / max(minimumElementSize, 1) else {
            throw .malformed("\(field): count \(count) exceeds the payload")
        }
        return count
    }

    mutating func data(_ field: String) throws(ProtocolError) -> [UInt8] {
        let count = try count(field, minimumElementSize: 1)
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    mutating func string(_ field: String) throws(ProtocolError) -> String {
        let raw = try data(field)
        guard let text = String(validating: raw, as: UTF8.self) else { throw .malformed("\(field): not UTF-8") }
        guard !text.utf8.contains(0) else { throw .malformed("\(field): contains NUL") }
        return text
    }

    mutating func secret(_ field: String) throws(ProtocolError) -> SecretData {
        let count = try count(field, minimumElementSize: 1)
        defer { offset += count }
        return bytes.withUnsafeBytes {
            SecretData(bytes: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + count)]))
        }
    }

    mutating func optional<T>(_ field: String, _ read: (inout WireReader) throws(ProtocolError) -> T)
        throws(ProtocolError) -> T?
    {
        switch try byte(field) {
        case 0: return nil
        case 1: return try read(&self)
        default: throw .malformed("\(field): an optional's tag must be 0 or 1")
        }
    }

    mutating func strings(_ field: String) throws(ProtocolError) -> [String] {
        let count = try count(field, minimumElementSize: 4)
        var values: [String] = []
        for _ in 0..<count { values.append(try string(field)) }
        return values
    }

    mutating func pairs(_ field: String) throws(ProtocolError) -> [String: String] {
        let count = try count(field, minimumElementSize: 8)
        var values: [String: String] = [:]
        for _ in 0..<count {
            let key = try string(field)
            guard values[key] == nil else { throw .malformed("\(field): key repeated") }
            values[key] = try string(field)
        }
        return values
    }

    /// Refuses bytes left over after the last field.
    func end() throws(ProtocolError) {
        guard remaining == 0 else { throw .malformed("\(remaining) bytes after the last field") }
    }
}
