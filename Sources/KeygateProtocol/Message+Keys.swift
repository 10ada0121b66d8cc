import KeygateItems
import KeygatePolicy

// The key messages' payloads (README.md, "Messages"), written and read field by field.
extension Message {
    func encodeKeyMessage(into w: inout WireWriter) {
        switch self {
        case .createKey(let request, let privateKey):
            w.string(request.type.rawValue)
            w.optional(request.label) { $0.string($1) }
            w.data(request.applicationTag)
            w.optional(request.accessGroup) { $0.string($1) }
            Self.encode(request.protection, &w)
            w.bool(request.synchronizable)
            w.optional(privateKey) { $0.secret($1) }
        case .findKeys(let query), .deleteKeys(let query):
            Self.encode(query, &w)
        case .updateKeys(let query, let changes):
            Self.encode(query, &w)
            w.optional(changes.label) { $0.string($1) }
            w.optional(changes.applicationTag) { $0.data($1) }
        case .sign(let input, let algorithm, let query, let reuseSeconds):
            w.data(input)
            w.string(algorithm.rawValue)
            Self.encode(query, &w)
            w.uint32(reuseSeconds)
        case .keyAgreement(let peer, let query, let reuseSeconds):
            w.data(peer)
            Self.encode(query, &w)
            w.uint32(reuseSeconds)
        case .keys(let keys):
            w.uint32(UInt32(keys.count))
            for key in keys {
                w.string(key.accessGroup)
                w.optional(key.label) { $0.string($1) }
                w.data(key.applicationTag)
                w.data(key.applicationLabel)
                w.string(key.type.rawValue)
                w.string(key.tokenID)
                w.bool(key.imported)
                w.data(key.publicKey)
                w.string(key.accessControl.textForm)
                w.int64(key.created.nanoseconds)
                w.int64(key.modified.nanoseconds)
            }
        case .decrypt(let message, let algorithm, let query, let reuseSeconds):
            w.data(message)
            w.string(algorithm.rawValue)
            Self.encode(query, &w)
            w.uint32(reuseSeconds)
        case .signature(let signature):
            w.data(signature)
        case .sharedSecret(let secret), .plaintext(let secret):
            w.secret(secret)
        default:
            preconditionFailure("not a key message")
        }
    }

    private static func encode(_ query: KeyQuery, _ w: inout WireWriter) {
        w.optional(query.label) { $0.string($1) }
        w.optional(query.applicationTag) { $0.data($1) }
        w.optional(query.applicationLabel) { $0.data($1) }
        w.optional(query.type) { $0.string($1.rawValue) }
        w.optional(query.accessGroup) { $0.string($1) }
        w.optional(query.operationPrompt) { $0.string($1) }
        w.optional(query.authenticationUI) { $0.string($1.rawValue) }
    }

    static func decodeKeyMessage(_ type: MessageType, _ r: inout WireReader) throws(ProtocolError) -> Message {
        switch type {
        case .createKey:
            let keyType = try Self.keyType(&r)
            let label = try optionalString("label", &r)
            let tag = try r.data("applicationTag")
            let group = try optionalString("accessGroup", &r)
            let protection = try protection(&r)
            let synchronizable = try r.bool("synchronizable")
            let privateKey = try r.optional("privateKey") { r throws(ProtocolError) in try r.secret("privateKey") }
            return .createKey(
                NewKeyRequest(
                    type: keyType, label: label, applicationTag: tag, accessGroup: group, protection: protection,
                    synchronizable: synchronizable), privateKey: privateKey)
        case .findKeys: return .findKeys(try keyQuery(&r))
        case .deleteKeys: return .deleteKeys(try keyQuery(&r))
        case .updateKeys:
            let query = try keyQuery(&r)
            let label = try optionalString("label", &r)
            let tag = try r.optional("applicationTag") { r throws(ProtocolError) in try r.data("applicationTag") }
            return .updateKeys(query, KeyChanges(label: label, applicationTag: tag))
        case .sign:
            let input = try r.data("input")
            let name = try r.string("algorithm")
            guard let algorithm = SignatureAlgorithm(rawValue: name) else {
                throw .malformed("algorithm: unknown signature algorithm")
            }
            let query = try keyQuery(&r)
            return .sign(input: input, algorithm: algorithm, key: query, reuseSeconds: try r.uint32("reuseSeconds"))
        case .keyAgreement:
            let peer = try r.data("peer")
            let query = try keyQuery(&r)
            return .keyAgreement(peer: peer, key: query, reuseSeconds: try r.uint32("reuseSeconds"))
        case .keys:
            // Each key is at least its fixed fields' lengths and flags.
            let count = try r.count("keys", minimumElementSize: 40)
            var keys: [KeyFields] = []
            for _ in 0..<count {
                let group = try r.string("accessGroup")
                let label = try optionalString("label", &r)
                let tag = try r.data("applicationTag")
                let applicationLabel = try r.data("applicationLabel")
                let keyType = try Self.keyType(&r)
                let token = try r.string("tokenID")
                let imported = try r.bool("imported")
                let publicKey = try r.data("publicKey")
                let control = try accessControl(try r.string("accessControl"))
                keys.append(
                    KeyFields(
                        accessGroup: group, label: label, applicationTag: tag, applicationLabel: applicationLabel,
                        type: keyType, tokenID: token, imported: imported, publicKey: publicKey, accessControl: control,
                        created: Timestamp(nanoseconds: try r.int64("created")),
                        modified: Timestamp(nanoseconds: try r.int64("modified"))))
            }
            return .keys(keys)
        case .decrypt:
            let message = try r.data("message")
            guard let algorithm = ECIESAlgorithm(rawValue: try r.string("algorithm")) else {
                throw .malformed("algorithm: unknown ECIES algorithm")
            }
            let query = try keyQuery(&r)
            return .decrypt(
                message: message, algorithm: algorithm, key: query, reuseSeconds: try r.uint32("reuseSeconds"))
        case .plaintext: return .plaintext(try r.secret("plaintext"))
        case .signature: return .signature(try r.data("signature"))
        case .sharedSecret: return .sharedSecret(try r.secret("sharedSecret"))
        default: throw .malformed("type: not a key message")
        }
    }

    private static func keyType(_ r: inout WireReader) throws(ProtocolError) -> KeyType {
        guard let type = KeyType(rawValue: try r.string("type")) else { throw .malformed("type: unknown key type") }
        return type
    }

    private static func keyQuery(_ r: inout WireReader) throws(ProtocolError) -> KeyQuery {
        let label = try optionalString("label", &r)
        let tag = try r.optional("applicationTag") { r throws(ProtocolError) in try r.data("applicationTag") }
        let applicationLabel = try r.optional("applicationLabel") { r throws(ProtocolError) in
            try r.data("applicationLabel")
        }
        let type = try r.optional("type") { r throws(ProtocolError) in try keyType(&r) }
        let group = try optionalString("accessGroup", &r)
        let prompt = try optionalString("operationPrompt", &r)
        return KeyQuery(
            label: label, applicationTag: tag, applicationLabel: applicationLabel, type: type, accessGroup: group,
            operationPrompt: prompt, authenticationUI: try interaction(&r))
    }
}
