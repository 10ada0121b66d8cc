import KeygateItems
import KeygatePolicy
import KeygateStore

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

/// `--label L [--access-group G]`: the one key a command works on.
struct KeyTarget: Sendable {
    /// The key's label.
    let label: String
    /// The access group an option names, or nil for `keygate`.
    let accessGroup: String?

    /// Reads the options (the parser has checked that the label is there).
    init(_ arguments: ParsedArguments) {
        label = arguments.required(KeyOptions.label)
        accessGroup = arguments.value(ItemOptions.accessGroup)
    }

    /// Runs `body` on the key labelled ``label`` in its group's session.
    func withKey<Result>(
        _ context: CommandContext, _ body: (Session, KeyFields) async throws(KeygateError) -> Result
    ) async throws(KeygateError) -> Result {
        try await context.withSession(accessGroup: accessGroup) { session throws(KeygateError) in
            try await body(session, try await session.key(labelled: label))
        }
    }

    /// The query naming exactly `key` in `session`'s group.
    static func query(_ key: KeyFields, in session: Session) -> KeyQuery {
        KeyQuery(applicationLabel: key.applicationLabel, accessGroup: session.accessGroup)
    }
}

/// The message a key command reads on standard input (at most the store's value limit).
enum KeyInput {
    /// Standard input, byte for byte.
    /// - Throws: `errSecParam` when `--passphrase-fd 0` would read the passphrase from it too.
    static func read(_ what: String, _ context: CommandContext) throws(KeygateError) -> SecretData {
        if context.global.pam.passphraseDescriptor == 0 {
            throw KeygateError(.param, "--passphrase-fd 0 would read the passphrase from \(what)'s standard input")
        }
        return try context.environment.input.read(limit: ItemLimits.defaultMaximumValueLength, what: what)
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
