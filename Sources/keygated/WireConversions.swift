import Keygate
import KeygatePolicy
import KeygateProtocol
import KeygateStore

// The edge between the wire's typed payloads and the facade's request types. Secret bytes
// cross here: `SecretBytes` (the protocol's wiped buffer) becomes `SecretData` (the store's)
// and back, copied once each way.

extension SecretData {
    convenience init(_ bytes: SecretBytes) {
        self.init(bytes: bytes.withUnsafeBytes { Array($0) })
    }

    var wire: SecretBytes { withUnsafeBytes { SecretBytes(copying: $0) } }
}

extension ItemProtection {
    init(_ wire: WireProtection) {
        switch wire {
        case .accessible(let protection): self = .accessible(protection)
        case .accessControl(let control): self = .accessControl(control)
        }
    }
}

extension ItemQuery {
    init(_ wire: QueryPayload) {
        let synchronizable: SynchronizableMatch =
            switch wire.synchronizable {
            case .no: .no
            case .yes: .yes
            case .any: .any
            }
        let limit: MatchLimit? = wire.matchLimit.map { limit -> MatchLimit in
            switch limit {
            case .one: .one
            case .all: .all
            case .count(let count): .count(Int(count))
            }
        }
        self.init(
            service: wire.service, account: wire.account, accessGroup: wire.accessGroup, label: wire.label,
            generic: wire.generic, synchronizable: synchronizable, protection: wire.protection, matchLimit: limit,
            returnData: wire.returnData, returnAttributes: wire.returnAttributes,
            authenticationUI: wire.authenticationUI, operationPrompt: wire.operationPrompt,
            otherAttributes: wire.otherAttributes)
    }
}

extension AddRequest {
    init(_ wire: AddPayload) {
        self.init(
            service: wire.service, account: wire.account, accessGroup: wire.accessGroup, label: wire.label,
            generic: wire.generic, synchronizable: wire.synchronizable, protection: ItemProtection(wire.protection),
            data: SecretData(wire.data), authenticationUI: wire.authenticationUI,
            otherAttributes: wire.otherAttributes)
    }
}

extension ItemChanges {
    init(_ wire: ChangesPayload) {
        self.init(
            service: wire.service, account: wire.account, accessGroup: wire.accessGroup, label: wire.label,
            generic: wire.generic, synchronizable: wire.synchronizable,
            protection: wire.protection.map(ItemProtection.init), data: wire.data.map(SecretData.init),
            otherAttributes: wire.otherAttributes)
    }
}

extension ItemPayload {
    init(_ item: MatchedItem) {
        let attributes = item.attributes.map { a in
            AttributesPayload(
                service: a.identity.service, account: a.identity.account, accessGroup: a.identity.accessGroup,
                synchronizable: a.identity.synchronizable, label: a.label, generic: a.generic,
                accessControl: a.accessControl, created: a.created, modified: a.modified)
        }
        self.init(attributes: attributes, data: item.data?.wire)
    }
}
