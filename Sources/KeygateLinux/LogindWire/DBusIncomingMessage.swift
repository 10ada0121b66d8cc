import Glibc

/// What the wire client needs of one message from the bus: its type, byte order, the serial it
/// replies to, an error reply's name, the body's signature and the body. Everything is read
/// bounds-checked from bytes the bus sent (anyone able to speak on the bus could have written
/// them): a message that does not parse is refused (``DBusWireError/badMessage``), never trusted.
struct DBusIncomingMessage: Equatable {
    /// 1 METHOD_CALL, 2 METHOD_RETURN, 3 ERROR, 4 SIGNAL.
    var type: UInt8
    var bigEndian: Bool
    /// The REPLY_SERIAL header field, 0 when absent.
    var replySerial: UInt32 = 0
    /// The ERROR_NAME header field, empty when absent (at most 127 bytes kept).
    var errorName = ""
    /// The SIGNATURE header field, empty when absent.
    var signature = ""
    var body: [UInt8] = []

    /// The largest message accepted (a LockedHint reply is under 200 bytes).
    static let maximumLength = 16384

    /// The lengths a message's fixed 16-byte start gives: of the whole message, and where its
    /// header fields end; nil when it is no message of protocol version 1 or is too long.
    static func extent(of start: [UInt8]) -> (total: Int, headerEnd: Int)? {
        guard start.count >= 16, start[0] == UInt8(ascii: "l") || start[0] == UInt8(ascii: "B"), start[3] == 1
        else { return nil }
        let big = start[0] == UInt8(ascii: "B")
        let bodyLength = Int(u32(start, at: 4, bigEndian: big))
        let fieldsLength = Int(u32(start, at: 12, bigEndian: big))
        guard fieldsLength <= maximumLength, bodyLength <= maximumLength else { return nil }
        let headerEnd = 16 + fieldsLength
        let total = ((headerEnd + 7) & ~7) + bodyLength
        guard total <= maximumLength else { return nil }
        return (total, headerEnd)
    }

    /// The message `bytes` holds whole (``extent(of:)``'s `total` bytes).
    /// - Throws: ``DBusWireError/badMessage`` for anything that does not parse.
    init(_ bytes: [UInt8]) throws(DBusWireError) {
        guard let (total, headerEnd) = Self.extent(of: bytes), bytes.count == total else { throw .badMessage }
        let big = bytes[0] == UInt8(ascii: "B")
        type = bytes[1]
        bigEndian = big
        body = Array(bytes[((headerEnd + 7) & ~7)...])
        var at = 16
        while at < headerEnd {
            at = (at + 7) & ~7
            guard at + 4 <= headerEnd, bytes[at + 1] == 1, bytes[at + 3] == 0 else { throw .badMessage }
            let code = bytes[at]
            let kind = bytes[at + 2]
            at += 4
            switch kind {
            case UInt8(ascii: "u"):
                at = (at + 3) & ~3
                guard at + 4 <= headerEnd else { throw .badMessage }
                if code == 5 { replySerial = Self.u32(bytes, at: at, bigEndian: big) }
                at += 4
            case UInt8(ascii: "s"), UInt8(ascii: "o"):
                at = (at + 3) & ~3
                guard at + 4 <= headerEnd else { throw .badMessage }
                let length = Int(Self.u32(bytes, at: at, bigEndian: big))
                at += 4
                guard length < headerEnd - at, bytes[at + length] == 0 else { throw .badMessage }
                if code == 4 { errorName = String(decoding: bytes[at..<(at + min(length, 127))], as: UTF8.self) }
                at += length + 1
            case UInt8(ascii: "g"):
                guard at < headerEnd else { throw .badMessage }
                let length = Int(bytes[at])
                at += 1
                guard length < headerEnd - at, bytes[at + length] == 0 else { throw .badMessage }
                if code == 8 {
                    guard length < 64 else { throw .badMessage }
                    signature = String(decoding: bytes[at..<(at + length)], as: UTF8.self)
                }
                at += length + 1
            default:
                throw .badMessage
            }
        }
    }

    /// The BOOLEAN a reply to `Properties.Get` holds: one VARIANT of signature `b`.
    /// - Throws: ``DBusWireError/badMessage`` for any other body.
    func variantBoolean() throws(DBusWireError) -> Bool {
        guard signature == "v", body.count >= 8, body[0] == 1, body[1] == UInt8(ascii: "b"), body[2] == 0 else {
            throw .badMessage
        }
        switch Self.u32(body, at: 4, bigEndian: bigEndian) {
        case 0: return false
        case 1: return true
        default: throw .badMessage
        }
    }

    static func u32(_ bytes: [UInt8], at offset: Int, bigEndian: Bool) -> UInt32 {
        let b = bytes[offset..<(offset + 4)].map(UInt32.init)
        return bigEndian ? b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3] : b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0]
    }
}

/// Why the wire client got no answer, as the errno it stands for (the lock state's message
/// names it the way `strerror` does).
enum DBusWireError: Error, Equatable {
    /// What the bus sent does not parse.
    case badMessage
    /// The deadline passed.
    case timedOut
    /// The bus refused the handshake.
    case refused
    /// The bus answered with an error reply of this name.
    case errorReply(String)
    /// A system call failed with this errno (`ENOENT`: no socket at the path).
    case system(Int32)

    /// The errno this failure stands for.
    var errno: Int32 {
        switch self {
        case .badMessage: EBADMSG
        case .timedOut: ETIMEDOUT
        case .refused: EACCES
        case .errorReply: EIO
        case .system(let code): code
        }
    }
}
