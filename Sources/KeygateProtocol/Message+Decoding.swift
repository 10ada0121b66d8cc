import KeygateItems
import KeygatePolicy

// The payload layouts of README.md, "Messages", read field by field; every field is checked as
// it is read (see WireReader), and a wrong one names itself, never its bytes.
extension Message {
    static func decode(_ type: MessageType, _ r: inout WireReader) throws(ProtocolError) -> Message {
        switch type {
        case .hello:
            return .hello(
                minimumVersion: try r.byte("minimumVersion"), maximumVersion: try r.byte("maximumVersion"),
                accessGroups: try r.strings("accessGroups"), client: try r.string("client"),
                challenge: try nonce(&r), answersPrompts: try r.bool("answersPrompts"))
        case .status: return .status
        case .auditVerify: return .auditVerify
        case .cancel: return .cancel
        case .lock: return .lock
        case .registerAgent: return .registerAgent
        case .done: return .done
        case .add: return .add(try add(&r))
        case .copyMatching: return .copyMatching(try query(&r), reuseSeconds: try r.uint32("reuseSeconds"))
        case .delete: return .delete(try query(&r), reuseSeconds: try r.uint32("reuseSeconds"))
        case .update:
            let query = try query(&r)
            let changes = try changes(&r)
            return .update(query, changes, reuseSeconds: try r.uint32("reuseSeconds"))
        case .auditShow: return .auditShow(limit: try r.uint32("limit"))
        case .promptAnswer:
            return .promptAnswer(try r.optional("answer") { r throws(ProtocolError) in try r.secret("answer") })
        case .challenge: return .challenge(nonce: try nonce(&r))
        case .helloReply:
            return .helloReply(version: try r.byte("version"), daemonVersion: try r.string("daemonVersion"))
        case .statusReply:
            return .statusReply(
                StatusPayload(
                    mode: try r.string("mode"), uid: try r.uint32("uid"), gid: try r.uint32("gid"),
                    pid: try r.int32("pid"), executable: try r.string("executable"),
                    daemonVersion: try r.string("daemonVersion"), pidfdSource: try r.string("pidfdSource")))
        case .items:
            // Each item is at least its two optional tags.
            let count = try r.count("items", minimumElementSize: 2)
            var items: [MatchedItem] = []
            for _ in 0..<count {
                let attributes = try r.optional("attributes") { r throws(ProtocolError) in try itemAttributes(&r) }
                let data = try r.optional("data") { r throws(ProtocolError) in try r.secret("data") }
                items.append(MatchedItem(attributes: attributes, data: data))
            }
            return .items(items)
        case .auditRecords: return .auditRecords(try r.strings("records"))
        case .auditVerified:
            let records = UInt64(bitPattern: try r.int64("records"))
            return .auditVerified(
                records: records,
                problem: try r.optional("problem") { r throws(ProtocolError) in try r.string("problem") })
        case .prompt:
            return .prompt(style: try promptStyle(&r), text: try r.string("text"))
        case .agentPrompt:
            let style = try promptStyle(&r)
            return .agentPrompt(
                AgentPrompt(
                    style: style, text: try r.string("text"), purpose: try r.string("purpose"),
                    program: try r.string("program"), pid: try r.int32("pid")))
        case .createKey, .findKeys, .updateKeys, .deleteKeys, .sign, .keyAgreement, .keys, .signature,
            .sharedSecret, .decrypt, .plaintext:
            return try decodeKeyMessage(type, &r)
        case .sshAgentConnection:
            return .sshAgentConnection(
                accessGroups: try r.strings("accessGroups"), reuseSeconds: try r.uint32("reuseSeconds"))
        case .error:
            return .error(
                status: try r.int32("status"), message: try r.string("message"),
                cause: try r.optional("cause") { r throws(ProtocolError) in try cause(&r) })
        }
    }

    /// A prompt's style byte.
    private static func promptStyle(_ r: inout WireReader) throws(ProtocolError) -> PromptStyle {
        let raw = try r.byte("style")
        guard let style = PromptStyle(rawValue: raw) else { throw .malformed("style: unknown prompt style \(raw)") }
        return style
    }

    /// An error's cause: a kind byte (``CauseKind``), then its fields.
    private static func cause(_ r: inout WireReader) throws(ProtocolError) -> KeygateError.Cause {
        let raw = try r.byte("cause")
        switch CauseKind(rawValue: raw) {
        case .sqlite: return .sqlite(SQLiteResultCode(rawValue: try r.int32("cause.sqlite")))
        case .pam: return .pam(try r.int32("cause.pam"))
        case .errno: return .errno(try r.int32("cause.errno"))
        case .sodium:
            return .sodium(function: try r.string("cause.sodium.function"), result: try r.int32("cause.sodium.result"))
        case .libcrypto:
            return .libcrypto(
                function: try r.string("cause.libcrypto.function"),
                error: UInt64(bitPattern: try r.int64("cause.libcrypto.error")))
        case .condition: return .condition(KeygateError.Condition(rawValue: try r.string("cause.condition")))
        case nil: throw .malformed("cause: unknown kind \(raw)")
        }
    }

    /// A challenge nonce: exactly ``ChallengeNonce/size`` bytes.
    private static func nonce(_ r: inout WireReader) throws(ProtocolError) -> [UInt8] {
        let nonce = try r.data("challenge")
        guard nonce.count == ChallengeNonce.size else {
            throw .malformed("challenge: \(nonce.count) bytes, not \(ChallengeNonce.size)")
        }
        return nonce
    }

    private static func add(_ r: inout WireReader) throws(ProtocolError) -> AddRequest {
        AddRequest(
            service: try r.string("service"), account: try r.string("account"),
            accessGroup: try optionalString("accessGroup", &r), label: try optionalString("label", &r),
            generic: try r.optional("generic") { r throws(ProtocolError) in try r.data("generic") },
            synchronizable: try r.bool("synchronizable"), protection: try protection(&r),
            data: try r.secret("data"), authenticationUI: try interaction(&r),
            otherAttributes: try r.pairs("otherAttributes"))
    }

    private static func changes(_ r: inout WireReader) throws(ProtocolError) -> ItemChanges {
        ItemChanges(
            service: try optionalString("service", &r), account: try optionalString("account", &r),
            accessGroup: try optionalString("accessGroup", &r), label: try optionalString("label", &r),
            generic: try r.optional("generic") { r throws(ProtocolError) in try r.data("generic") },
            synchronizable: try r.optional("synchronizable") { r throws(ProtocolError) in
                try r.bool("synchronizable")
            },
            protection: try r.optional("protection") { r throws(ProtocolError) in try protection(&r) },
            data: try r.optional("data") { r throws(ProtocolError) in try r.secret("data") },
            otherAttributes: try r.pairs("otherAttributes"))
    }

    private static func itemAttributes(_ r: inout WireReader) throws(ProtocolError) -> ItemAttributes {
        let service = try r.string("service")
        let account = try r.string("account")
        let identity = ItemIdentity(
            accessGroup: try r.string("accessGroup"), account: account, service: service,
            synchronizable: try r.bool("synchronizable"))
        return ItemFields(
            identity: identity, label: try optionalString("label", &r),
            generic: try r.optional("generic") { r throws(ProtocolError) in try r.data("generic") },
            accessControl: try accessControl(try r.string("accessControl")),
            created: Timestamp(nanoseconds: try r.int64("created")),
            modified: Timestamp(nanoseconds: try r.int64("modified")))
    }

    static func optionalString(_ field: String, _ r: inout WireReader) throws(ProtocolError) -> String? {
        try r.optional(field) { r throws(ProtocolError) in try r.string(field) }
    }

    static func accessControl(_ text: String) throws(ProtocolError) -> AccessControl {
        do {
            return try AccessControl(textForm: text)
        } catch {
            throw .malformed("accessControl: \(error.message)")
        }
    }

    static func protection(_ r: inout WireReader) throws(ProtocolError) -> ItemProtection {
        switch try r.byte("protection") {
        case 0:
            let name = try r.string("protection")
            guard let protection = ProtectionClass(rawValue: name) else {
                throw .malformed("protection: unknown protection class")
            }
            return .accessible(protection)
        case 1:
            return .accessControl(try accessControl(try r.string("accessControl")))
        default:
            throw .malformed("protection: tag must be 0 or 1")
        }
    }

    static func interaction(_ r: inout WireReader) throws(ProtocolError) -> InteractionPolicy? {
        try r.optional("authenticationUI") { r throws(ProtocolError) in
            guard let policy = InteractionPolicy(rawValue: try r.string("authenticationUI")) else {
                throw .malformed("authenticationUI: unknown interaction policy")
            }
            return policy
        }
    }

    private static func query(_ r: inout WireReader) throws(ProtocolError) -> ItemQuery {
        let service = try optionalString("service", &r)
        let account = try optionalString("account", &r)
        let accessGroup = try optionalString("accessGroup", &r)
        let label = try optionalString("label", &r)
        let generic = try r.optional("generic") { r throws(ProtocolError) in try r.data("generic") }
        let synchronizable: SynchronizableMatch =
            switch try r.byte("synchronizable") {
            case 0: .no
            case 1: .yes
            case 2: .any
            default: throw .malformed("synchronizable: must be 0, 1 or 2")
            }
        let protection = try r.optional("protection") { r throws(ProtocolError) in
            guard let protection = ProtectionClass(rawValue: try r.string("protection")) else {
                throw .malformed("protection: unknown protection class")
            }
            return protection
        }
        let matchLimit = try r.optional("matchLimit") { r throws(ProtocolError) -> MatchLimit in
            switch try r.byte("matchLimit") {
            case 0: return .one
            case 1: return .all
            // 0 is carried through: the facade refuses it with errSecParam, as embedded.
            case 2: return .count(Int(try r.uint32("matchLimit")))
            default: throw .malformed("matchLimit: tag must be 0, 1 or 2")
            }
        }
        return ItemQuery(
            service: service, account: account, accessGroup: accessGroup, label: label, generic: generic,
            synchronizable: synchronizable, protection: protection, matchLimit: matchLimit,
            returnData: try r.bool("returnData"), returnAttributes: try r.bool("returnAttributes"),
            authenticationUI: try interaction(&r), operationPrompt: try optionalString("operationPrompt", &r),
            otherAttributes: try r.pairs("otherAttributes"))
    }
}
