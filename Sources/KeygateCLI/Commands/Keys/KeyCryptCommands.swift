import KeygateItems
import KeygateKeys
import KeygatePolicy
import KeygateStore

/// `keygate key encrypt`: encrypts standard input to a P-256 key with ECIES in Apple's layout
/// (spec 9.9.8); needs only the public key, so never a proof.
struct KeyEncryptCommand: Command {
    static let configuration = KeyCommand.subcommand(
        "encrypt", summary: "encrypt standard input to a key (ECIES)",
        options: [KeyOptions.label, ItemOptions.accessGroup])

    let label: String
    let accessGroup: String?

    init(parsing arguments: ParsedArguments) {
        label = arguments.required(KeyOptions.label)
        accessGroup = arguments.value(ItemOptions.accessGroup)
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        let message = try context.environment.input.read(
            limit: ItemLimits.defaultMaximumValueLength, what: "the message to encrypt")
        try await context.withSession(accessGroup: accessGroup) { session throws(KeygateError) in
            let key = try await session.key(labelled: label)
            let sealed = try ECIES.seal(
                message, to: try PublicKey(type: key.type, bytes: key.publicKey),
                algorithm: .cofactorVariableIVX963SHA256AESGCM)
            try context.console.output.write(sealed)
        }
        return .success
    }
}

/// `keygate key decrypt`: decrypts an ECIES message on standard input with a P-256 key, after
/// its access control allows `ock`.
struct KeyDecryptCommand: Command {
    static let configuration = KeyCommand.subcommand(
        "decrypt", summary: "decrypt standard input with a key (ECIES)",
        options: [KeyOptions.label, ItemOptions.accessGroup])

    let label: String
    let accessGroup: String?

    init(parsing arguments: ParsedArguments) {
        label = arguments.required(KeyOptions.label)
        accessGroup = arguments.value(ItemOptions.accessGroup)
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        if context.global.pam.passphraseDescriptor == 0 {
            throw KeygateError(
                .param, "--passphrase-fd 0 would read the passphrase from the message's standard input")
        }
        let message = try context.environment.input.read(
            limit: ItemLimits.defaultMaximumValueLength, what: "the message to decrypt")
        try await context.withSession(accessGroup: accessGroup) { session throws(KeygateError) in
            let key = try await session.key(labelled: label)
            let plaintext = try await session.keychain.decrypt(
                message.withUnsafeBytes { Array($0) }, algorithm: .cofactorVariableIVX963SHA256AESGCM,
                key: KeyQuery(applicationLabel: key.applicationLabel, accessGroup: session.accessGroup),
                context: session.context)
            try plaintext.withUnsafeBytes { (bytes) throws(KeygateError) in
                try context.console.output.write(bytes)
            }
        }
        return .success
    }
}
