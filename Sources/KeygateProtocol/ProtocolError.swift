/// Why a frame or a frame sequence was refused. Every case is a clean, typed rejection: the
/// connection that sent it is answered with an error frame and closed; nothing else changes.
public enum ProtocolError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The length field names more bytes than the limit allows (nothing beyond the header was
    /// buffered).
    case oversized(length: Int, limit: Int)
    /// The length field is below the fixed header size.
    case undersized(length: Int)
    /// The stream ended inside a frame (`buffered` bytes of it had arrived).
    case truncated(buffered: Int)
    /// The frame's version byte is not one this side speaks.
    case unsupportedVersion(UInt8)
    /// The message type byte names no message.
    case unknownMessageType(UInt8)
    /// The reserved header bytes are not zero.
    case reservedBitsSet
    /// The payload does not decode as its message type says (what was wrong, never a value).
    case malformed(String)
    /// A well-formed frame that may not come now (wrong direction, no hello first, a request id
    /// that does not increase, an answer nobody asked for).
    case outOfOrder(String)
    /// Bytes sent by another process than the one that opened the connection (the kernel names
    /// each sender): the connection was handed on, and what its opener was is no longer who
    /// speaks on it.
    case foreignSender(sender: Int32, opener: Int32)
    /// A hello that does not echo the nonce of this connection's challenge: written before the
    /// daemon had read the caller's identity, or by something that never read the challenge.
    case challengeMismatch
    /// The caller runs another program than the one read when it connected (it `exec`ed since):
    /// what the connection was admitted as is no longer who speaks on it.
    case programChanged

    /// The OSStatus an error frame carries for this rejection: `errSecParam` (-50) for frames
    /// that do not decode, `errSecBadReq` (-909) for frames that come out of order, from a
    /// process that did not open the connection, with a hello that does not echo the challenge,
    /// or from a caller that has run another program since it connected.
    public var status: Int32 {
        switch self {
        case .outOfOrder, .foreignSender, .challengeMismatch, .programChanged: -909
        default: -50
        }
    }

    /// A one-line reason, safe to log and to send (it never quotes payload bytes).
    public var description: String {
        switch self {
        case .oversized(let length, let limit): "frame of \(length) bytes exceeds the limit of \(limit)"
        case .undersized(let length): "frame length \(length) is shorter than the header"
        case .truncated(let buffered): "the stream ended inside a frame (\(buffered) bytes of it arrived)"
        case .unsupportedVersion(let version):
            "protocol version \(version) is not supported (this side speaks \(FrameLimits.version) only)"
        case .unknownMessageType(let type): "unknown message type \(type)"
        case .reservedBitsSet: "reserved header bits are set"
        case .malformed(let why): "malformed payload: \(why)"
        case .outOfOrder(let why): "frame out of order: \(why)"
        case .foreignSender(let sender, let opener):
            "bytes from process \(sender) on the connection process \(opener) opened (a connection is "
                + "used only by the process that opened it)"
        case .challengeMismatch:
            "hello does not echo this connection's challenge (a client reads the daemon's challenge "
                + "before it says hello)"
        case .programChanged: "the caller has run another program since it connected"
        }
    }
}
