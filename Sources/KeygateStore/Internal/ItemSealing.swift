import KeygatePolicy

/// The associated data that binds a sealed value to its item: the identity and the whole
/// access control (class, constraints, bound enrollment set, options), length-prefixed under
/// a versioned tag. Editing any of them, or moving the ciphertext to another row, makes the
/// value fail to open.
enum ItemSealing {
    static func associatedData(for fields: ItemFields) -> [UInt8] {
        var bytes = Array("keygate.item.v1\u{0}".utf8)
        for part in [
            fields.identity.accessGroup, fields.identity.account, fields.identity.service,
            fields.identity.synchronizable ? "1" : "0", fields.accessControl.textForm,
        ] {
            let utf8 = Array(part.utf8)
            let count = UInt32(truncatingIfNeeded: utf8.count)
            bytes += [
                UInt8(count >> 24), UInt8(truncatingIfNeeded: count >> 16), UInt8(truncatingIfNeeded: count >> 8),
                UInt8(truncatingIfNeeded: count),
            ]
            bytes += utf8
        }
        return bytes
    }
}
