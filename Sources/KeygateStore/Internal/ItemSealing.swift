import KeygatePolicy

/// The associated data that binds a sealed value to its item: the identity and the whole
/// access control (class, constraints, bound enrollment set, options), length-prefixed under
/// a versioned tag (KeygatePolicy's one length-prefix encoder). Editing any of them, or moving
/// the ciphertext to another row, makes the value fail to open.
enum ItemSealing {
    /// The associated data for `identity` and an access control's text: the text form a value
    /// is sealed with, as its row holds it.
    static func associatedData(identity: ItemIdentity, controlText: String) -> [UInt8] {
        var encoder = LengthPrefixedEncoder(
            tag: "keygate.item.v1",
            capacity: 5 * 4 + 1 + identity.accessGroup.utf8.count + identity.account.utf8.count
                + identity.service.utf8.count + controlText.utf8.count)
        encoder.append(identity.accessGroup)
        encoder.append(identity.account)
        encoder.append(identity.service)
        encoder.append(identity.synchronizable ? "1" : "0")
        encoder.append(controlText)
        return encoder.bytes
    }
}
