/// A D-Bus METHOD_CALL as the wire client sends it (little-endian, protocol version 1): header
/// fields path, interface, member, destination and, with arguments, their signature (strings
/// only), then the body.
struct DBusMethodCall {
    var destination: String
    var path: String
    var interface: String
    var member: String
    /// STRING arguments, in order.
    var arguments: [String] = []

    /// The largest message this client writes: a call that does not fit is refused, never cut.
    static let maximumLength = 1024

    /// The message with `serial`; nil when it would be longer than ``maximumLength``.
    func bytes(serial: UInt32) -> [UInt8]? {
        var body = DBusWriter()
        for argument in arguments { body.string(argument) }
        var message = DBusWriter()
        message.bytes([UInt8(ascii: "l"), 1, 0, 1])  // little-endian, METHOD_CALL, no flags, version 1
        message.u32(UInt32(body.count))
        message.u32(serial)
        message.u32(0)  // the header fields' length, filled in below
        message.field(1, "o", path)
        message.field(2, "s", interface)
        message.field(3, "s", member)
        message.field(6, "s", destination)
        if !arguments.isEmpty { message.field(8, "g", String(repeating: "s", count: arguments.count)) }
        message.setU32(UInt32(message.count - 16), at: 12)
        message.pad(to: 8)
        message.bytes(body.bytes)
        return message.count <= Self.maximumLength ? message.bytes : nil
    }
}

/// Marshals D-Bus values, little-endian; alignment counts from the start of what is written.
struct DBusWriter {
    private(set) var bytes: [UInt8] = []

    var count: Int { bytes.count }

    mutating func pad(to alignment: Int) {
        while bytes.count % alignment != 0 { bytes.append(0) }
    }

    mutating func bytes(_ more: [UInt8]) { bytes += more }

    mutating func u32(_ value: UInt32) {
        pad(to: 4)
        bytes += [
            UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8),
            UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 24),
        ]
    }

    mutating func setU32(_ value: UInt32, at offset: Int) {
        for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
    }

    /// A STRING or OBJECT_PATH: length, bytes, NUL.
    mutating func string(_ text: String) {
        u32(UInt32(text.utf8.count))
        bytes += text.utf8
        bytes.append(0)
    }

    /// A header field: STRUCT(BYTE code, VARIANT value) whose value has the one-letter type `type`.
    mutating func field(_ code: UInt8, _ type: Character, _ text: String) {
        pad(to: 8)
        bytes += [code, 1, type.asciiValue ?? 0, 0]
        if type == "g" {
            bytes.append(UInt8(truncatingIfNeeded: text.utf8.count))
            bytes += text.utf8
            bytes.append(0)
        } else {
            string(text)
        }
    }
}
