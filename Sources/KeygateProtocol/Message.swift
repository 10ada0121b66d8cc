public import KeygatePolicy

/// Every message of the protocol, typed. ``frame(requestID:)`` encodes one; the initialiser
/// taking a ``Frame`` decodes one, validating every field (an access control is parsed, a protection
/// class and an interaction policy must be known names, strings must be UTF-8 without NUL,
/// no bytes may follow the last field).
public enum Message: Sendable, Equatable {
    /// Client: the versions it speaks (inclusive range) and the access groups it asks for.
    case hello(minimumVersion: UInt8, maximumVersion: UInt8, accessGroups: [String], client: String)
    /// Client: the daemon's view of this connection.
    case status
    /// Client: add an item.
    case add(AddPayload)
    /// Client: find items.
    case copyMatching(QueryPayload)
    /// Client: change items.
    case update(QueryPayload, ChangesPayload)
    /// Client: delete items.
    case delete(QueryPayload)
    /// Client: the caller's last `limit` audit records (0: all).
    case auditShow(limit: UInt32)
    /// Client: verify the caller's audit trail.
    case auditVerify
    /// Client: the answer to the prompt of the request with the frame's id (nil: no answer
    /// for a message that needs none).
    case promptAnswer(SecretBytes?)
    /// Client: abandon the request with the frame's id.
    case cancel
    /// Daemon: the version chosen, and the daemon's version string.
    case helloReply(version: UInt8, daemonVersion: String)
    /// Daemon: the status.
    case statusReply(StatusPayload)
    /// Daemon: the add, update or delete succeeded.
    case done
    /// Daemon: the items a read matched.
    case items([ItemPayload])
    /// Daemon: audit records, one JSON text each.
    case auditRecords([String])
    /// Daemon: the trail verified (`records` checked) or not (`problem`).
    case auditVerified(records: UInt64, problem: String?)
    /// Daemon: show this PAM message; answer with ``promptAnswer(_:)`` under the same request id.
    case prompt(style: PromptStyle, text: String)
    /// Daemon: the request (or, with request id 0, the connection) failed with this OSStatus.
    case error(status: Int32, message: String)

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
        case .helloReply: .helloReply
        case .statusReply: .statusReply
        case .done: .done
        case .items: .items
        case .auditRecords: .auditRecords
        case .auditVerified: .auditVerified
        case .prompt: .prompt
        case .error: .error
        }
    }

    /// An error message carrying `error`'s status, as the facade would have thrown it.
    public init(_ error: KeygateError) {
        self = .error(status: error.status.rawValue, message: error.message)
    }

    /// The `KeygateError` an error message stands for (nil for other messages), so a client
    /// raises what the embedded facade raises.
    public var keygateError: KeygateError? {
        guard case .error(let status, let message) = self else { return nil }
        return KeygateError(KeygateStatus(rawValue: status), message)
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

// MARK: - Encoding

extension Message {
    private func encode(into w: inout WireWriter) {
        switch self {
        case .hello(let minimum, let maximum, let groups, let client):
            w.byte(minimum)
            w.byte(maximum)
            w.strings(groups)
            w.string(client)
        case .status, .auditVerify, .cancel, .done:
            break
        case .add(let add):
            w.string(add.service)
            w.string(add.account)
            w.optional(add.accessGroup) { $0.string($1) }
            w.optional(add.label) { $0.string($1) }
            w.optional(add.generic) { $0.data($1) }
            w.bool(add.synchronizable)
            Self.encode(add.protection, &w)
            w.secret(add.data)
            w.optional(add.authenticationUI) { $0.string($1.rawValue) }
            w.pairs(add.otherAttributes)
        case .copyMatching(let query), .delete(let query):
            Self.encode(query, &w)
        case .update(let query, let changes):
            Self.encode(query, &w)
            w.optional(changes.service) { $0.string($1) }
            w.optional(changes.account) { $0.string($1) }
            w.optional(changes.accessGroup) { $0.string($1) }
            w.optional(changes.label) { $0.string($1) }
            w.optional(changes.generic) { $0.data($1) }
            w.optional(changes.synchronizable) { $0.bool($1) }
            w.optional(changes.protection) { Self.encode($1, &$0) }
            w.optional(changes.data) { $0.secret($1) }
            w.pairs(changes.otherAttributes)
        case .auditShow(let limit):
            w.uint32(limit)
        case .promptAnswer(let answer):
            w.optional(answer) { $0.secret($1) }
        case .helloReply(let version, let daemonVersion):
            w.byte(version)
            w.string(daemonVersion)
        case .statusReply(let status):
            w.string(status.mode)
            w.uint32(status.uid)
            w.uint32(status.gid)
            w.int32(status.pid)
            w.string(status.executable)
            w.string(status.daemonVersion)
            w.string(status.pidfdSource)
        case .items(let items):
            w.uint32(UInt32(items.count))
            for item in items {
                w.optional(item.attributes) { w, a in
                    w.string(a.service)
                    w.string(a.account)
                    w.string(a.accessGroup)
                    w.bool(a.synchronizable)
                    w.optional(a.label) { $0.string($1) }
                    w.optional(a.generic) { $0.data($1) }
                    w.string(a.accessControl.textForm)
                    w.int64(a.created.nanoseconds)
                    w.int64(a.modified.nanoseconds)
                }
                w.optional(item.data) { $0.secret($1) }
            }
        case .auditRecords(let records):
            w.strings(records)
        case .auditVerified(let records, let problem):
            w.int64(Int64(bitPattern: records))
            w.optional(problem) { $0.string($1) }
        case .prompt(let style, let text):
            w.byte(style.rawValue)
            w.string(text)
        case .error(let status, let message):
            w.int32(status)
            w.string(message)
        }
    }

    private static func encode(_ protection: WireProtection, _ w: inout WireWriter) {
        switch protection {
        case .accessible(let protection):
            w.byte(0)
            w.string(protection.rawValue)
        case .accessControl(let control):
            w.byte(1)
            w.string(control.textForm)
        }
    }

    private static func encode(_ query: QueryPayload, _ w: inout WireWriter) {
        w.optional(query.service) { $0.string($1) }
        w.optional(query.account) { $0.string($1) }
        w.optional(query.accessGroup) { $0.string($1) }
        w.optional(query.label) { $0.string($1) }
        w.optional(query.generic) { $0.data($1) }
        w.byte(query.synchronizable.rawValue)
        w.optional(query.protection) { $0.string($1.rawValue) }
        w.optional(query.matchLimit) { w, limit in
            switch limit {
            case .one: w.byte(0)
            case .all: w.byte(1)
            case .count(let count):
                w.byte(2)
                w.uint32(count)
            }
        }
        w.bool(query.returnData)
        w.bool(query.returnAttributes)
        w.optional(query.authenticationUI) { $0.string($1.rawValue) }
        w.optional(query.operationPrompt) { $0.string($1) }
        w.pairs(query.otherAttributes)
    }
}

// MARK: - Decoding

extension Message {
    private static func decode(_ type: MessageType, _ r: inout WireReader) throws(ProtocolError) -> Message {
        switch type {
        case .hello:
            return .hello(
                minimumVersion: try r.byte("minimumVersion"), maximumVersion: try r.byte("maximumVersion"),
                accessGroups: try r.strings("accessGroups"), client: try r.string("client"))
        case .status: return .status
        case .auditVerify: return .auditVerify
        case .cancel: return .cancel
        case .done: return .done
        case .add:
            return .add(
                AddPayload(
                    service: try r.string("service"), account: try r.string("account"),
                    accessGroup: try r.optional("accessGroup") { r throws(ProtocolError) in try r.string("accessGroup")
                    },
                    label: try r.optional("label") { r throws(ProtocolError) in try r.string("label") },
                    generic: try r.optional("generic") { r throws(ProtocolError) in try r.data("generic") },
                    synchronizable: try r.bool("synchronizable"), protection: try protection(&r),
                    data: try r.secret("data"), authenticationUI: try interaction(&r),
                    otherAttributes: try r.pairs("otherAttributes")))
        case .copyMatching: return .copyMatching(try query(&r))
        case .delete: return .delete(try query(&r))
        case .update:
            let query = try query(&r)
            let changes = ChangesPayload(
                service: try r.optional("service") { r throws(ProtocolError) in try r.string("service") },
                account: try r.optional("account") { r throws(ProtocolError) in try r.string("account") },
                accessGroup: try r.optional("accessGroup") { r throws(ProtocolError) in try r.string("accessGroup") },
                label: try r.optional("label") { r throws(ProtocolError) in try r.string("label") },
                generic: try r.optional("generic") { r throws(ProtocolError) in try r.data("generic") },
                synchronizable: try r.optional("synchronizable") { r throws(ProtocolError) in
                    try r.bool("synchronizable")
                },
                protection: try r.optional("protection") { r throws(ProtocolError) in try protection(&r) },
                data: try r.optional("data") { r throws(ProtocolError) in try r.secret("data") },
                otherAttributes: try r.pairs("otherAttributes"))
            return .update(query, changes)
        case .auditShow: return .auditShow(limit: try r.uint32("limit"))
        case .promptAnswer:
            return .promptAnswer(try r.optional("answer") { r throws(ProtocolError) in try r.secret("answer") })
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
            var items: [ItemPayload] = []
            for _ in 0..<count {
                let attributes = try r.optional("attributes") { r throws(ProtocolError) in try decodeAttributes(&r) }
                let data = try r.optional("data") { r throws(ProtocolError) in try r.secret("data") }
                items.append(ItemPayload(attributes: attributes, data: data))
            }
            return .items(items)
        case .auditRecords: return .auditRecords(try r.strings("records"))
        case .auditVerified:
            let records = UInt64(bitPattern: try r.int64("records"))
            return .auditVerified(
                records: records,
                problem: try r.optional("problem") { r throws(ProtocolError) in try r.string("problem") })
        case .prompt:
            let raw = try r.byte("style")
            guard let style = PromptStyle(rawValue: raw) else { throw .malformed("style: unknown prompt style \(raw)") }
            return .prompt(style: style, text: try r.string("text"))
        case .error:
            return .error(status: try r.int32("status"), message: try r.string("message"))
        }
    }

    private static func decodeAttributes(_ r: inout WireReader) throws(ProtocolError) -> AttributesPayload {
        AttributesPayload(
            service: try r.string("service"), account: try r.string("account"),
            accessGroup: try r.string("accessGroup"), synchronizable: try r.bool("synchronizable"),
            label: try r.optional("label") { r throws(ProtocolError) in try r.string("label") },
            generic: try r.optional("generic") { r throws(ProtocolError) in try r.data("generic") },
            accessControl: try accessControl(try r.string("accessControl")),
            created: Timestamp(nanoseconds: try r.int64("created")),
            modified: Timestamp(nanoseconds: try r.int64("modified")))
    }

    private static func accessControl(_ text: String) throws(ProtocolError) -> AccessControl {
        do {
            return try AccessControl(textForm: text)
        } catch {
            throw .malformed("accessControl: \(error.message)")
        }
    }

    private static func protection(_ r: inout WireReader) throws(ProtocolError) -> WireProtection {
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

    private static func interaction(_ r: inout WireReader) throws(ProtocolError) -> InteractionPolicy? {
        try r.optional("authenticationUI") { r throws(ProtocolError) in
            guard let policy = InteractionPolicy(rawValue: try r.string("authenticationUI")) else {
                throw .malformed("authenticationUI: unknown interaction policy")
            }
            return policy
        }
    }

    private static func query(_ r: inout WireReader) throws(ProtocolError) -> QueryPayload {
        let service = try r.optional("service") { r throws(ProtocolError) in try r.string("service") }
        let account = try r.optional("account") { r throws(ProtocolError) in try r.string("account") }
        let accessGroup = try r.optional("accessGroup") { r throws(ProtocolError) in try r.string("accessGroup") }
        let label = try r.optional("label") { r throws(ProtocolError) in try r.string("label") }
        let generic = try r.optional("generic") { r throws(ProtocolError) in try r.data("generic") }
        let rawSync = try r.byte("synchronizable")
        guard let synchronizable = WireSynchronizable(rawValue: rawSync) else {
            throw .malformed("synchronizable: must be 0, 1 or 2")
        }
        let protection = try r.optional("protection") { r throws(ProtocolError) in
            guard let protection = ProtectionClass(rawValue: try r.string("protection")) else {
                throw .malformed("protection: unknown protection class")
            }
            return protection
        }
        let matchLimit = try r.optional("matchLimit") { r throws(ProtocolError) -> WireMatchLimit in
            switch try r.byte("matchLimit") {
            case 0: return .one
            case 1: return .all
            case 2:
                let count = try r.uint32("matchLimit")
                guard count >= 1 else { throw .malformed("matchLimit: a count must be at least 1") }
                return .count(count)
            default: throw .malformed("matchLimit: tag must be 0, 1 or 2")
            }
        }
        return QueryPayload(
            service: service, account: account, accessGroup: accessGroup, label: label, generic: generic,
            synchronizable: synchronizable, protection: protection, matchLimit: matchLimit,
            returnData: try r.bool("returnData"), returnAttributes: try r.bool("returnAttributes"),
            authenticationUI: try interaction(&r),
            operationPrompt: try r.optional("operationPrompt") { r throws(ProtocolError) in
                try r.string("operationPrompt")
            },
            otherAttributes: try r.pairs("otherAttributes"))
    }
}
