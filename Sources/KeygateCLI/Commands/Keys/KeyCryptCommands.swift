import KeygateItems
import KeygateKeys
import KeygatePolicy

/// `keygate key encrypt`: encrypts standard input to a P-256 key with ECIES in Apple's layout
/// (spec 9.9.8); needs only the public key, so never a proof.
struct KeyEncryptCommand: Command {
    static let configuration = KeyCommand.subcommand(
        "encrypt", summary: "encrypt standard input to a key (ECIES)",
        options: [KeyOptions.label, ItemOptions.accessGroup])

    let target: KeyTarget

    init(parsing arguments: ParsedArguments) { target = KeyTarget(arguments) }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        let message = try KeyInput.read("the message to encrypt", context)
        try await target.withKey(context) { (_, key) throws(KeygateError) in
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

    let target: KeyTarget

    init(parsing arguments: ParsedArguments) { target = KeyTarget(arguments) }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        let message = try KeyInput.read("the message to decrypt", context)
        try await target.withKey(context) { (session, key) throws(KeygateError) in
            let plaintext = try await session.keychain.decrypt(
                message.withUnsafeBytes { Array($0) }, algorithm: .cofactorVariableIVX963SHA256AESGCM,
                key: KeyTarget.query(key, in: session), context: session.context)
            try plaintext.withUnsafeBytes { (bytes) throws(KeygateError) in try context.console.output.write(bytes) }
        }
        return .success
    }
}
