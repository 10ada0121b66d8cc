import KeygateItems
import KeygatePolicy

/// The options of `keygate key`.
enum KeyOptions {
    static let label = OptionSpec("label", short: "l", .text("L"), required: true, help: "the key's label")
    static let labelFilter = OptionSpec("label", short: "l", .text("L"), help: "only the key with this label")
    static let type = OptionSpec(
        "type", .choice("TYPE", KeyType.allCases.map(\.rawValue)), required: true, help: "p256 or ed25519")
    static let format = OptionSpec(
        "format", .choice("FORMAT", PublicKeyFormat.allCases.map(\.rawValue)),
        help: "openssh (default), pem or x963")
    static let algorithm = OptionSpec(
        "algorithm", .choice("ALGORITHM", SignatureAlgorithm.allCases.map(\.commandName)),
        help: "ecdsa-sha256 (default for p256), ecdsa-digest-sha256 or ed25519")
    static let accessible = OptionSpec(
        "accessible", .text("CLASS"), help: "protection class (default: whenUnlockedThisDeviceOnly)")
    static let all = [
        label, type, format, algorithm, ProtectionOptions.accessControl, accessible, ItemOptions.accessGroup,
    ]

    /// The query for the key labelled `label` in `session`'s access group.
    static func query(label: String?, in session: Session) -> KeyQuery {
        KeyQuery(label: label, accessGroup: session.accessGroup)
    }
}

/// How `key public` writes a public key.
enum PublicKeyFormat: String, CaseIterable, Sendable {
    /// `ecdsa-sha2-nistp256 AAAA… label`.
    case openssh
    /// `-----BEGIN PUBLIC KEY-----`: SubjectPublicKeyInfo.
    case pem
    /// The raw bytes: X9.63 `04‖X‖Y`, or 32 Ed25519 bytes.
    case x963
}
