import KeygateItems
import KeygatePolicy

/// The associated data that binds a sealed keeper blob to its key row: every field a decision
/// or a use depends on, length-prefixed under a versioned tag. Editing any of them, or moving
/// the blob to another row, makes it fail to open. The dates are left out: they decide nothing.
enum KeySealing {
    static func associatedData(_ fields: KeyFields, controlText: String) -> [UInt8] {
        var encoder = LengthPrefixedEncoder(tag: "keygate.key.v1", capacity: 256 + controlText.utf8.count)
        encoder.append(fields.accessGroup)
        encoder.append(fields.label.map { "1" + $0 } ?? "0")
        encoder.append(bytes: fields.applicationTag)
        encoder.append(bytes: fields.applicationLabel)
        encoder.append(fields.type.rawValue)
        encoder.append(fields.tokenID)
        encoder.append(fields.imported ? "1" : "0")
        encoder.append(bytes: fields.publicKey)
        encoder.append(controlText)
        return encoder.bytes
    }
}
