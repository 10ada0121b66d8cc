import KeygateItems
import KeygatePolicy
import KeygateProtocol

/// One request as the daemon acts on it, whatever frontend it came through: the operation, its
/// options checked once (here, when the request is made; nothing past this bounds them again),
/// the caller as the kernel described it, and the frontend. Every frontend turns its caller and
/// its input into this value and hands it to the same ``RequestHandler``, so the same facade,
/// rules, proofs and audit decide it.
struct DaemonRequest: Sendable {
    /// What is asked.
    enum Operation: Sendable {
        /// The daemon's view of the connection.
        case status
        /// Add an item.
        case add(AddRequest)
        /// Find items.
        case copyMatching(ItemQuery)
        /// Change items.
        case update(ItemQuery, ItemChanges)
        /// Delete items.
        case delete(ItemQuery)
        /// Forget the caller's reusable proofs.
        case lock
        /// The caller's last `limit` audit records (0: all).
        case auditShow(limit: UInt32)
        /// Verify the caller's audit trail.
        case auditVerify
        /// Make a key in the daemon's keeper, or hand it one (`privateKey`).
        case createKey(NewKeyRequest, privateKey: SecretData?)
        /// Find keys, attributes only.
        case findKeys(KeyQuery)
        /// Change keys' labels or tags.
        case updateKeys(KeyQuery, KeyChanges)
        /// Delete keys.
        case deleteKeys(KeyQuery)
        /// Sign with a key.
        case sign(input: [UInt8], algorithm: SignatureAlgorithm, key: KeyQuery)
        /// ECDH with a key.
        case keyAgreement(peer: [UInt8], key: KeyQuery)
        /// Decrypt an ECIES message with a key.
        case decrypt(message: [UInt8], algorithm: ECIESAlgorithm, key: KeyQuery)
    }

    /// Where a request came in. Each frontend says whether its callers can be asked for a proof
    /// on the request's own channel.
    enum Frontend: String, Sendable {
        /// The Keygate socket: the client that asked answers its prompts on its connection.
        case keygateSocket = "keygate socket"
        /// An SSH agent connection handed to the daemon: the protocol has no prompts, so the
        /// session's authentication agent is asked.
        case sshAgent = "ssh agent"

        /// Whether a prompt can be relayed to the requester on the request's own channel.
        var hasPromptChannel: Bool {
            switch self {
            case .keygateSocket: true
            case .sshAgent: false
            }
        }
    }

    let operation: Operation
    /// How long an earlier proof may stand in for a new one, within Apple's cap.
    let reuse: ReuseWindow
    /// Who asked, from the kernel.
    let caller: DaemonCaller
    /// Where the request came in.
    let frontend: Frontend
    /// Whether the requester can be asked for a proof on the request's own channel: its
    /// frontend has one and the client said it answers prompts (else its session's
    /// authentication agent is asked).
    let promptChannel: Bool

    /// The request `message` asks for, from `caller` through `frontend`; nil for a message that
    /// is no request (hello, answers, cancels: the connection handles those itself).
    /// - Throws: `errSecParam` naming the field when an option is out of range (a reuse window
    ///   above 300 s), before anything is proved or read.
    init?(_ message: Message, caller: DaemonCaller, frontend: Frontend, answersPrompts: Bool = true)
        throws(KeygateError)
    {
        var seconds: UInt32 = 0
        switch message {
        case .status: operation = .status
        case .add(let request): operation = .add(request)
        case .copyMatching(let query, let window):
            operation = .copyMatching(query)
            seconds = window
        case .update(let query, let changes, let window):
            operation = .update(query, changes)
            seconds = window
        case .delete(let query, let window):
            operation = .delete(query)
            seconds = window
        case .lock: operation = .lock
        case .auditShow(let limit): operation = .auditShow(limit: limit)
        case .auditVerify: operation = .auditVerify
        case .createKey(let request, let privateKey): operation = .createKey(request, privateKey: privateKey)
        case .findKeys(let query): operation = .findKeys(query)
        case .updateKeys(let query, let changes): operation = .updateKeys(query, changes)
        case .deleteKeys(let query): operation = .deleteKeys(query)
        case .sign(let input, let algorithm, let key, let window):
            operation = .sign(input: input, algorithm: algorithm, key: key)
            seconds = window
        case .keyAgreement(let peer, let key, let window):
            operation = .keyAgreement(peer: peer, key: key)
            seconds = window
        case .decrypt(let message, let algorithm, let key, let window):
            operation = .decrypt(message: message, algorithm: algorithm, key: key)
            seconds = window
        default: return nil
        }
        self.reuse = try ReuseWindow(seconds: seconds)
        self.caller = caller
        self.frontend = frontend
        self.promptChannel = frontend.hasPromptChannel && answersPrompts
    }
}
