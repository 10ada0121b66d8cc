import KeygateKeys
public import KeygatePolicy

/// The message numbers of the SSH agent protocol (RFC 9987, draft-miller-ssh-agent) this agent
/// reads or writes.
public enum SSHAgentMessageType: UInt8, Sendable {
    /// `SSH_AGENT_FAILURE`.
    case failure = 5
    /// `SSH_AGENT_SUCCESS`.
    case success = 6
    /// `SSH_AGENTC_REQUEST_IDENTITIES`.
    case requestIdentities = 11
    /// `SSH_AGENT_IDENTITIES_ANSWER`.
    case identitiesAnswer = 12
    /// `SSH_AGENTC_SIGN_REQUEST`.
    case signRequest = 13
    /// `SSH_AGENT_SIGN_RESPONSE`.
    case signResponse = 14
    /// `SSH_AGENTC_EXTENSION`.
    case `extension` = 27
    /// `SSH_AGENT_EXTENSION_FAILURE`.
    case extensionFailure = 28
    /// `SSH_AGENT_EXTENSION_RESPONSE`.
    case extensionResponse = 29
}

/// A request read from one agent frame.
public enum SSHAgentRequest: Hashable, Sendable {
    /// List the keys.
    case requestIdentities
    /// Sign `data` with the key whose OpenSSH blob is `keyBlob`; `flags` as sent.
    case sign(keyBlob: [UInt8], data: [UInt8], flags: UInt32)
    /// An extension request: its name and the rest of the message.
    case `extension`(name: String, contents: [UInt8])
    /// A request this agent refuses by design (adding, removing or locking keys: keys are made
    /// in the keeper), or one it does not know: its number and why.
    case refused(type: UInt8, reason: String)

    /// The most bytes one frame may hold (OpenSSH's agent allows the same, 256 KiB): a longer
    /// frame closes the connection.
    public static let maximumLength = 256 * 1024

    /// The request in `payload` (a frame without its length).
    /// - Throws: `errSecParam` naming the field for a message cut short, with bytes left over,
    ///   or a name that is not UTF-8: the connection is then closed.
    public init(payload: [UInt8]) throws(KeygateError) {
        var reader = SSHWireReader(payload)
        let type = try reader.byte("the message type")
        switch type {
        case SSHAgentMessageType.requestIdentities.rawValue:
            self = .requestIdentities
        case SSHAgentMessageType.signRequest.rawValue:
            let blob = try reader.bytes("the sign request's key")
            let data = try reader.bytes("the sign request's data")
            let flags = try reader.uint32("the sign request's flags")
            self = .sign(keyBlob: blob, data: data, flags: flags)
        case SSHAgentMessageType.extension.rawValue:
            let name = try reader.string("the extension's name")
            var contents: [UInt8] = []
            while !reader.isAtEnd { contents.append(try reader.byte("the extension's contents")) }
            self = .extension(name: name, contents: contents)
            return
        case 17, 25:
            self = .refused(type: type, reason: "adding keys through the agent is refused: keys are made in the keeper")
            return
        case 18, 19:
            self = .refused(type: type, reason: "removing keys through the agent is refused: use keygate key delete")
            return
        case 20, 21, 26:
            self = .refused(type: type, reason: "smartcard keys are not served")
            return
        case 22, 23:
            self = .refused(type: type, reason: "locking the agent is not served: each use is gated by its key")
            return
        default:
            self = .refused(type: type, reason: "message type \(type) is not part of the agent protocol served")
            return
        }
        guard reader.isAtEnd else {
            throw KeygateError(.param, "\(reader.remaining) bytes after the message of type \(type)")
        }
    }
}

/// The replies this agent writes, as frame payloads.
enum SSHAgentReply {
    static let failure: [UInt8] = [SSHAgentMessageType.failure.rawValue]
    static let success: [UInt8] = [SSHAgentMessageType.success.rawValue]
    static let extensionFailure: [UInt8] = [SSHAgentMessageType.extensionFailure.rawValue]

    /// `SSH_AGENT_IDENTITIES_ANSWER` with each key's blob and comment.
    static func identities(_ keys: [(blob: [UInt8], comment: String)]) -> [UInt8] {
        var writer = SSHWireWriter()
        writer.byte(SSHAgentMessageType.identitiesAnswer.rawValue)
        writer.uint32(UInt32(keys.count))
        for key in keys {
            writer.bytes(key.blob)
            writer.string(key.comment)
        }
        return writer.output
    }

    /// `SSH_AGENT_SIGN_RESPONSE` with a signature blob.
    static func signature(_ blob: [UInt8]) -> [UInt8] {
        var writer = SSHWireWriter()
        writer.byte(SSHAgentMessageType.signResponse.rawValue)
        writer.bytes(blob)
        return writer.output
    }

    /// `SSH_AGENT_EXTENSION_RESPONSE` to `query` (RFC 9987 §3.8.1): the extension names.
    static func query(_ names: [String]) -> [UInt8] {
        var writer = SSHWireWriter()
        writer.byte(SSHAgentMessageType.extensionResponse.rawValue)
        writer.string("query")
        for name in names { writer.string(name) }
        return writer.output
    }

    /// A frame: the payload behind its `uint32` length.
    static func frame(_ payload: [UInt8]) -> [UInt8] {
        let length = UInt32(payload.count)
        return [UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff)]
            + payload
    }
}
