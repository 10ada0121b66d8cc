import KeygateItems

/// One frame: the unit on the wire.
///
/// Layout (all integers big-endian):
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 4 | length of everything after this field (header rest + payload) |
/// | 4 | 1 | protocol version (``FrameLimits/version``) |
/// | 5 | 1 | message type (``MessageType``) |
/// | 6 | 2 | reserved, zero |
/// | 8 | 4 | request id |
/// | 12 | length − 8 | payload |
public struct Frame: Sendable {
    /// The message type.
    public var type: MessageType
    /// The request this frame belongs to (0: the connection itself).
    public var requestID: UInt32
    /// The encoded message body.
    public var payload: [UInt8]

    /// A frame.
    public init(type: MessageType, requestID: UInt32, payload: [UInt8]) {
        self.type = type
        self.requestID = requestID
        self.payload = payload
    }

    /// Zeroes the payload (it may have held a secret) once the message was decoded.
    public mutating func wipe() { SecretData.wipe(&payload) }
}

/// The protocol's fixed numbers.
public enum FrameLimits {
    /// The only protocol version this build speaks (4: key items; 3 had none; 3 added that
    /// `hello` says whether the client answers prompts, and that a connection can become its
    /// session's authentication agent; 1 had no challenge).
    public static let version: UInt8 = 4
    /// Bytes of the length field.
    public static let lengthFieldSize = 4
    /// Bytes after the length field before the payload (version, type, reserved, request id).
    public static let headerSize = 8
    /// The default limit on a frame's length field: 1 MiB.
    public static let defaultMaximumLength = 1 << 20
    /// No decoder accepts a limit above this (16 MiB).
    public static let hardMaximumLength = 16 << 20
}

/// What a frame carries; the high bit says who sends it (set: the daemon).
public enum MessageType: UInt8, CaseIterable, Sendable {
    /// Client: the versions it speaks and the access groups it asks for.
    case hello = 0x01
    /// Client: the daemon's view of this connection.
    case status = 0x02
    /// Client: add an item.
    case add = 0x03
    /// Client: find items.
    case copyMatching = 0x04
    /// Client: change items.
    case update = 0x05
    /// Client: delete items.
    case delete = 0x06
    /// Client: the caller's own audit records.
    case auditShow = 0x07
    /// Client: verify the caller's own audit trail.
    case auditVerify = 0x08
    /// Client: the answer to a relayed prompt.
    case promptAnswer = 0x09
    /// Client: abandon the request with this id.
    case cancel = 0x0A
    /// Client: forget the caller's reusable proofs.
    case lock = 0x0B
    /// Client: make this connection its session's authentication agent.
    case registerAgent = 0x0C
    /// Client: make a key in the daemon's keeper (or hand it one).
    case createKey = 0x0D
    /// Client: find keys (attributes only).
    case findKeys = 0x0E
    /// Client: change keys' labels or tags.
    case updateKeys = 0x0F
    /// Client: delete keys.
    case deleteKeys = 0x10
    /// Client: sign with a key.
    case sign = 0x11
    /// Client: ECDH with a key.
    case keyAgreement = 0x12
    /// Client: take over an SSH agent connection (its socket passed with the frame).
    case sshAgentConnection = 0x13
    /// Client: decrypt an ECIES message with a key.
    case decrypt = 0x14
    /// Daemon: the version chosen.
    case helloReply = 0x81
    /// Daemon: the status.
    case statusReply = 0x82
    /// Daemon: an add, update or delete succeeded.
    case done = 0x83
    /// Daemon: the items a read matched.
    case items = 0x84
    /// Daemon: audit records.
    case auditRecords = 0x85
    /// Daemon: the result of a verification.
    case auditVerified = 0x86
    /// Daemon: a PAM prompt to show.
    case prompt = 0x87
    /// Daemon: the connection's first frame, the nonce `hello` must echo.
    case challenge = 0x88
    /// Daemon: a prompt for an authentication agent, about another connection's request.
    case agentPrompt = 0x89
    /// Daemon: the keys a key request found or made.
    case keys = 0x8A
    /// Daemon: a signature.
    case signature = 0x8B
    /// Daemon: the shared secret of a key agreement.
    case sharedSecret = 0x8C
    /// Daemon: the plaintext of a decryption.
    case plaintext = 0x8D
    /// Daemon: the request failed (or the connection is closed), with its OSStatus.
    case error = 0x8F

    /// True for the messages a client sends.
    public var isFromClient: Bool { rawValue & 0x80 == 0 }
}
