import KeygateItems
import KeygatePolicy

// The payload layouts of README.md, "Messages", written field by field.
extension Message {
    func encode(into w: inout WireWriter) {
        switch self {
        case .hello(let minimum, let maximum, let groups, let client, let challenge, let answersPrompts):
            w.byte(minimum)
            w.byte(maximum)
            w.strings(groups)
            w.string(client)
            w.data(challenge)
            w.bool(answersPrompts)
        case .challenge(let nonce):
            w.data(nonce)
        case .status, .auditVerify, .cancel, .lock, .registerAgent, .done:
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
        case .copyMatching(let query, let reuseSeconds), .delete(let query, let reuseSeconds):
            Self.encode(query, &w)
            w.uint32(reuseSeconds)
        case .update(let query, let changes, let reuseSeconds):
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
            w.uint32(reuseSeconds)
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
                    w.string(a.identity.service)
                    w.string(a.identity.account)
                    w.string(a.identity.accessGroup)
                    w.bool(a.identity.synchronizable)
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
        case .agentPrompt(let prompt):
            w.byte(prompt.style.rawValue)
            w.string(prompt.text)
            w.string(prompt.purpose)
            w.string(prompt.program)
            w.int32(prompt.pid)
        case .createKey, .findKeys, .updateKeys, .deleteKeys, .sign, .keyAgreement, .keys, .signature,
            .sharedSecret, .decrypt, .plaintext:
            encodeKeyMessage(into: &w)
        case .sshAgentConnection(let groups, let reuseSeconds):
            w.strings(groups)
            w.uint32(reuseSeconds)
        case .error(let status, let message, let cause):
            w.int32(status)
            w.string(message)
            w.optional(cause) { w, cause in Self.encode(cause, &w) }
        }
    }

    /// An error's cause: its kind byte (``CauseKind``), then its fields.
    private static func encode(_ cause: KeygateError.Cause, _ w: inout WireWriter) {
        switch cause {
        case .sqlite(let code):
            w.byte(CauseKind.sqlite.rawValue)
            w.int32(code.rawValue)
        case .pam(let status):
            w.byte(CauseKind.pam.rawValue)
            w.int32(status)
        case .errno(let code):
            w.byte(CauseKind.errno.rawValue)
            w.int32(code)
        case .sodium(let function, let result):
            w.byte(CauseKind.sodium.rawValue)
            w.string(function)
            w.int32(result)
        case .libcrypto(let function, let error):
            w.byte(CauseKind.libcrypto.rawValue)
            w.string(function)
            w.int64(Int64(bitPattern: error))
        case .condition(let condition):
            w.byte(CauseKind.condition.rawValue)
            w.string(condition.rawValue)
        }
    }

    static func encode(_ protection: ItemProtection, _ w: inout WireWriter) {
        switch protection {
        case .accessible(let protection):
            w.byte(0)
            w.string(protection.rawValue)
        case .accessControl(let control):
            w.byte(1)
            w.string(control.textForm)
        }
    }

    private static func encode(_ query: ItemQuery, _ w: inout WireWriter) {
        w.optional(query.service) { $0.string($1) }
        w.optional(query.account) { $0.string($1) }
        w.optional(query.accessGroup) { $0.string($1) }
        w.optional(query.label) { $0.string($1) }
        w.optional(query.generic) { $0.data($1) }
        switch query.synchronizable {
        case .no: w.byte(0)
        case .yes: w.byte(1)
        case .any: w.byte(2)
        }
        w.optional(query.protection) { $0.string($1.rawValue) }
        w.optional(query.matchLimit) { w, limit in
            switch limit {
            case .one: w.byte(0)
            case .all: w.byte(1)
            case .count(let count):
                // Below 1 travels as 0, for the facade to refuse (`errSecParam`) as it does embedded.
                w.byte(2)
                w.uint32(UInt32(clamping: count))
            }
        }
        w.bool(query.returnData)
        w.bool(query.returnAttributes)
        w.optional(query.authenticationUI) { $0.string($1.rawValue) }
        w.optional(query.operationPrompt) { $0.string($1) }
        w.pairs(query.otherAttributes)
    }
}
