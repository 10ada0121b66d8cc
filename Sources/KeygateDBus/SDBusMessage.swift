internal import CSystemd
import Glibc

/// The sd-bus functions, from libsystemd opened at first use (``CSystemd``'s table): nil when
/// libsystemd cannot be loaded.
enum SDBus {
    static var table: keygate_sd_bus_table? {
        guard keygate_sd_bus_load() != 0 else { return nil }
        return keygate_sd_bus().pointee
    }
}

/// One sd-bus message, read or written value by value (``DBusValue``); the caller owns the
/// reference.
struct SDBusMessage {
    let pointer: OpaquePointer
    let api: keygate_sd_bus_table

    private static func check(_ result: Int32, _ what: String) throws(DBusFailure) {
        guard result >= 0 else { throw DBusFailure.invalidArguments("\(what) (errno \(-result))") }
    }

    // MARK: - Reading

    /// Every value left in the message.
    func readAll() throws(DBusFailure) -> [DBusValue] {
        var values: [DBusValue] = []
        while let value = try read() { values.append(value) }
        return values
    }

    /// The next value at the current level, nil at its end.
    func read() throws(DBusFailure) -> DBusValue? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        let peeked = api.p_sd_bus_message_peek_type!(pointer, &type, &contents)
        try Self.check(peeked, "the message cannot be read")
        guard peeked > 0 else { return nil }
        let inner = contents.map { String(cString: $0) } ?? ""
        switch UInt8(bitPattern: type) {
        case UInt8(ascii: "y"): return .byte(try basic(type, UInt8(0)))
        case UInt8(ascii: "b"): return .boolean(try basic(type, Int32(0)) != 0)
        case UInt8(ascii: "n"): return .int32(Int32(try basic(type, Int16(0))))
        case UInt8(ascii: "q"): return .uint32(UInt32(try basic(type, UInt16(0))))
        case UInt8(ascii: "i"): return .int32(try basic(type, Int32(0)))
        case UInt8(ascii: "u"): return .uint32(try basic(type, UInt32(0)))
        case UInt8(ascii: "x"): return .int64(try basic(type, Int64(0)))
        case UInt8(ascii: "t"): return .uint64(try basic(type, UInt64(0)))
        case UInt8(ascii: "d"): return .double(try basic(type, Double(0)))
        case UInt8(ascii: "h"):
            let descriptor = try basic(type, Int32(-1))
            return .unixFileDescriptor(fcntl(descriptor, F_DUPFD_CLOEXEC, 3))
        case UInt8(ascii: "s"): return .string(try text(type))
        case UInt8(ascii: "o"): return .objectPath(try text(type))
        case UInt8(ascii: "g"): return .signature(try text(type))
        case UInt8(ascii: "a") where inner == "y":
            var data: UnsafeRawPointer?
            var size = 0
            try Self.check(
                api.p_sd_bus_message_read_array!(pointer, CChar(bitPattern: UInt8(ascii: "y")), &data, &size),
                "a byte array cannot be read")
            guard size > 0, let data else { return .bytes([]) }
            return .bytes(Array(UnsafeRawBufferPointer(start: data, count: size)))
        case UInt8(ascii: "a"):
            return .array(elementSignature: inner, try container(type, inner))
        case UInt8(ascii: "v"):
            guard let value = try container(type, inner).first else {
                throw DBusFailure.invalidArguments("an empty variant")
            }
            return .variant(value)
        case UInt8(ascii: "r"):
            return .structure(try container(type, inner))
        case UInt8(ascii: "e"):
            let pair = try container(type, inner)
            guard pair.count == 2 else { throw DBusFailure.invalidArguments("a dictionary entry is not a pair") }
            return .dictEntry(pair[0], pair[1])
        default:
            throw DBusFailure.invalidArguments(
                "values of D-Bus type '\(Character(Unicode.Scalar(UInt8(bitPattern: type))))' are not taken here")
        }
    }

    private func basic<T>(_ type: CChar, _ initial: T) throws(DBusFailure) -> T {
        var value = initial
        try Self.check(
            withUnsafeMutablePointer(to: &value) { api.p_sd_bus_message_read_basic!(pointer, type, $0) },
            "a value cannot be read")
        return value
    }

    private func text(_ type: CChar) throws(DBusFailure) -> String {
        var value: UnsafePointer<CChar>?
        try Self.check(api.p_sd_bus_message_read_basic!(pointer, type, &value), "a string cannot be read")
        return value.map { String(cString: $0) } ?? ""
    }

    private func container(_ type: CChar, _ contents: String) throws(DBusFailure) -> [DBusValue] {
        try Self.check(api.p_sd_bus_message_enter_container!(pointer, type, contents), "a container cannot be entered")
        let values = try readAll()
        try Self.check(api.p_sd_bus_message_exit_container!(pointer), "a container cannot be left")
        return values
    }

    // MARK: - Writing

    /// Appends `values` in order.
    func append(_ values: [DBusValue]) throws(DBusFailure) {
        for value in values { try append(value) }
    }

    private func append(_ value: DBusValue) throws(DBusFailure) {
        let result: Int32
        switch value {
        case .byte(var byte): result = api.p_sd_bus_message_append_basic!(pointer, ascii("y"), &byte)
        case .boolean(let flag):
            var number: Int32 = flag ? 1 : 0
            result = api.p_sd_bus_message_append_basic!(pointer, ascii("b"), &number)
        case .int32(var number): result = api.p_sd_bus_message_append_basic!(pointer, ascii("i"), &number)
        case .uint32(var number): result = api.p_sd_bus_message_append_basic!(pointer, ascii("u"), &number)
        case .int64(var number): result = api.p_sd_bus_message_append_basic!(pointer, ascii("x"), &number)
        case .uint64(var number): result = api.p_sd_bus_message_append_basic!(pointer, ascii("t"), &number)
        case .double(var number): result = api.p_sd_bus_message_append_basic!(pointer, ascii("d"), &number)
        case .string(let text):
            result = text.withCString { api.p_sd_bus_message_append_basic!(pointer, ascii("s"), $0) }
        case .objectPath(let path):
            result = path.withCString { api.p_sd_bus_message_append_basic!(pointer, ascii("o"), $0) }
        case .signature(let text):
            result = text.withCString { api.p_sd_bus_message_append_basic!(pointer, ascii("g"), $0) }
        case .bytes(let bytes):
            result = bytes.withUnsafeBytes {
                api.p_sd_bus_message_append_array!(
                    pointer, ascii("y"), $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), $0.count)
            }
        case .array(let element, let elements):
            try open(ascii("a"), element)
            try append(elements)
            result = api.p_sd_bus_message_close_container!(pointer)
        case .structure(let fields):
            try open(ascii("r"), fields.map(\.signature).joined())
            try append(fields)
            result = api.p_sd_bus_message_close_container!(pointer)
        case .dictEntry(let key, let entry):
            try open(ascii("e"), key.signature + entry.signature)
            try append([key, entry])
            result = api.p_sd_bus_message_close_container!(pointer)
        case .unixFileDescriptor(var descriptor):
            result = api.p_sd_bus_message_append_basic!(pointer, ascii("h"), &descriptor)
        case .variant(let inner):
            try open(ascii("v"), inner.signature)
            try append(inner)
            result = api.p_sd_bus_message_close_container!(pointer)
        }
        guard result >= 0 else {
            throw DBusFailure.failed("appending a value of type \(value.signature)", errno: -result)
        }
    }

    private func open(_ type: CChar, _ contents: String) throws(DBusFailure) {
        let result = api.p_sd_bus_message_open_container!(pointer, type, contents)
        guard result >= 0 else { throw DBusFailure.failed("opening a container of \(contents)", errno: -result) }
    }

    private func ascii(_ character: Unicode.Scalar) -> CChar { CChar(bitPattern: UInt8(character.value)) }
}
