public import KeygateItems
public import KeygatePolicy

/// Every message of the protocol, typed. ``frame(requestID:)`` encodes one; the initialiser
/// taking a ``Frame`` decodes one, validating every field (an access control is parsed, a protection
/// class and an interaction policy must be known names, strings must be UTF-8 without NUL,
/// no bytes may follow the last field).
///
/// Item requests and replies carry the facade's own types (`AddRequest`, `ItemQuery`,
/// `ItemChanges`, `MatchedItem`, `SecretData`): what a client sends is what the daemon hands to
/// `Keychain`, with no second copy of the model to keep in step.
public enum Message: Sendable, Equatable {
    /// Client: the versions it speaks (inclusive range), the access groups it asks for, the
    /// nonce of the daemon's ``challenge(nonce:)`` on this connection, echoed (a hello written
    /// before the daemon had read who the caller is cannot know it, so nothing written then
    /// counts), and whether it answers the prompts of its requests itself (false: a requester
    /// with no one to ask, such as a job without a terminal, whose proofs the daemon asks of its
    /// session's authentication agent).
    case hello(
        minimumVersion: UInt8, maximumVersion: UInt8, accessGroups: [String], client: String, challenge: [UInt8],
        answersPrompts: Bool = true)
    /// Client: the daemon's view of this connection.
    case status
    /// Client: add an item.
    case add(AddRequest)
    /// Client: find items; a proof up to `reuseSeconds` old may stand in for a new one
    /// (0: none; above ``ReuseWindow/maximumSeconds`` the daemon answers `errSecParam`).
    case copyMatching(ItemQuery, reuseSeconds: UInt32 = 0)
    /// Client: change items, with a reuse window as for ``copyMatching(_:reuseSeconds:)``.
    case update(ItemQuery, ItemChanges, reuseSeconds: UInt32 = 0)
    /// Client: delete items, with a reuse window as for ``copyMatching(_:reuseSeconds:)``.
    case delete(ItemQuery, reuseSeconds: UInt32 = 0)
    /// Client: the caller's last `limit` audit records (0: all).
    case auditShow(limit: UInt32)
    /// Client: verify the caller's audit trail.
    case auditVerify
    /// Client: the answer to the prompt of the request with the frame's id (nil: no answer
    /// for a message that needs none).
    case promptAnswer(SecretData?)
    /// Client: abandon the request with the frame's id.
    case cancel
    /// Client: forget the caller's reusable proofs (`keygate lock`); answered with ``done``.
    case lock
    /// Client: make this connection the authentication agent of the caller's login session (of
    /// the uid's requests made outside any session, for a caller in none), as the kernel says;
    /// answered with ``done``, after which the daemon sends ``agentPrompt(_:)`` frames and the
    /// agent answers each with ``promptAnswer(_:)`` or ``cancel`` under the prompt's id.
    case registerAgent
    /// Client: make a key in the daemon's keeper, or, with `privateKey`, hand it one made
    /// elsewhere; answered with ``keys(_:)`` holding the new key.
    case createKey(NewKeyRequest, privateKey: SecretData? = nil)
    /// Client: the keys matching the query, attributes only; answered with ``keys(_:)``.
    case findKeys(KeyQuery)
    /// Client: change keys' labels or tags; answered with ``done``.
    case updateKeys(KeyQuery, KeyChanges)
    /// Client: delete keys; answered with ``done``.
    case deleteKeys(KeyQuery)
    /// Client: sign `input` with the one key the query matches, with a reuse window as for
    /// ``copyMatching(_:reuseSeconds:)``; answered with ``signature(_:)``.
    case sign(input: [UInt8], algorithm: SignatureAlgorithm, key: KeyQuery, reuseSeconds: UInt32 = 0)
    /// Client: ECDH of the one key the query matches with `peer`; answered with ``sharedSecret(_:)``.
    case keyAgreement(peer: [UInt8], key: KeyQuery, reuseSeconds: UInt32 = 0)
    /// Client: decrypt an ECIES message (spec 9.9.8) with the one key the query matches;
    /// answered with ``plaintext(_:)``.
    case decrypt(message: [UInt8], algorithm: ECIESAlgorithm, key: KeyQuery, reuseSeconds: UInt32 = 0)
    /// Client: serve the SSH agent protocol on the socket passed with this frame (`SCM_RIGHTS`),
    /// for the program the kernel names as that socket's peer, with the keys of `accessGroups`
    /// (as the organisation grants them to that program), a proof standing for the next
    /// signatures of the same uid, logind session and terminal for `reuseSeconds` (at most
    /// 300; 0: each signature asks; never for a forwarded agent); answered with ``done``, then
    /// served by the daemon until the peer closes it.
    case sshAgentConnection(accessGroups: [String], reuseSeconds: UInt32 = 0)
    /// Daemon: the connection's first frame (request id 0), sent once the daemon has read the
    /// caller's identity from the kernel: ``ChallengeNonce/size`` fresh random bytes that `hello` must echo.
    case challenge(nonce: [UInt8])
    /// Daemon: the version chosen, and the daemon's version string.
    case helloReply(version: UInt8, daemonVersion: String)
    /// Daemon: the status.
    case statusReply(StatusPayload)
    /// Daemon: the add, update, delete or lock succeeded.
    case done
    /// Daemon: the items a read matched.
    case items([MatchedItem])
    /// Daemon: audit records, one JSON text each.
    case auditRecords([String])
    /// Daemon: the trail verified (`records` checked) or not (`problem`).
    case auditVerified(records: UInt64, problem: String?)
    /// Daemon: show this PAM message; answer with ``promptAnswer(_:)`` under the same request id.
    case prompt(style: PromptStyle, text: String)
    /// Daemon, to an authentication agent: show this PAM message of a request of the agent's
    /// session; a question is answered with ``promptAnswer(_:)`` (or ``cancel``) under the
    /// frame's id.
    case agentPrompt(AgentPrompt)
    /// Daemon: the keys a key request found or made (public halves and attributes only).
    case keys([KeyFields])
    /// Daemon: the keeper's signature.
    case signature([UInt8])
    /// Daemon: the shared secret of a key agreement.
    case sharedSecret(SecretData)
    /// Daemon: the plaintext of a decryption.
    case plaintext(SecretData)
    /// Daemon: the request (or, with request id 0, the connection) failed with this OSStatus,
    /// message and cause: the `KeygateError` the facade threw, whole, so a client raises the
    /// same error, its cause included (`catch KeygateError.Condition.racingWriter` matches
    /// through the daemon as it does embedded).
    case error(status: Int32, message: String, cause: KeygateError.Cause? = nil)

    /// The message type byte.
    public var type: MessageType {
        switch self {
        case .hello: .hello
        case .status: .status
        case .add: .add
        case .copyMatching: .copyMatching
        case .update: .update
        case .delete: .delete
        case .auditShow: .auditShow
        case .auditVerify: .auditVerify
        case .promptAnswer: .promptAnswer
        case .cancel: .cancel
        case .lock: .lock
        case .registerAgent: .registerAgent
        case .createKey: .createKey
        case .findKeys: .findKeys
        case .updateKeys: .updateKeys
        case .deleteKeys: .deleteKeys
        case .sign: .sign
        case .keyAgreement: .keyAgreement
        case .sshAgentConnection: .sshAgentConnection
        case .decrypt: .decrypt
        case .plaintext: .plaintext
        case .keys: .keys
        case .signature: .signature
        case .sharedSecret: .sharedSecret
        case .challenge: .challenge
        case .helloReply: .helloReply
        case .statusReply: .statusReply
        case .done: .done
        case .items: .items
        case .auditRecords: .auditRecords
        case .auditVerified: .auditVerified
        case .prompt: .prompt
        case .agentPrompt: .agentPrompt
        case .error: .error
        }
    }

    /// An error message carrying `error`'s status, as the facade would have thrown it.
    public init(_ error: KeygateError) {
        self = .error(status: error.status.rawValue, message: error.message, cause: error.cause)
    }

    /// The `KeygateError` an error message stands for (nil for other messages), so a client
    /// raises what the embedded facade raises.
    public var keygateError: KeygateError? {
        guard case .error(let status, let message, let cause) = self else { return nil }
        return KeygateError(KeygateStatus(rawValue: status), message, cause: cause)
    }

    /// The frame for this message.
    public func frame(requestID: UInt32) -> Frame {
        var writer = WireWriter()
        encode(into: &writer)
        return Frame(type: type, requestID: requestID, payload: writer.bytes)
    }

    /// Decodes `frame`'s payload.
    /// - Throws: ``ProtocolError/malformed(_:)`` naming the field that is wrong.
    public init(_ frame: Frame) throws(ProtocolError) {
        var reader = WireReader(frame.payload)
        self = try Self.decode(frame.type, &reader)
        try reader.end()
    }
}
