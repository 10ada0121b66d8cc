import KeygateItems
import KeygatePolicy
import KeygateStore

/// `keygate key sign`: signs standard input with a key, after its access control allows it.
struct KeySignCommand: Command {
    static let configuration = KeyCommand.subcommand(
        "sign", summary: "sign standard input with a key",
        options: [KeyOptions.label, KeyOptions.algorithm, ItemOptions.accessGroup])

    let label: String
    let algorithm: SignatureAlgorithm?
    let accessGroup: String?

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        label = arguments.required(KeyOptions.label)
        algorithm = try arguments.choice(KeyOptions.algorithm).flatMap(SignatureAlgorithm.init(named:))
        accessGroup = arguments.value(ItemOptions.accessGroup)
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        if context.global.pam.passphraseDescriptor == 0 {
            throw KeygateError(
                .param, "--passphrase-fd 0 would read the passphrase from the message's standard input")
        }
        let message = try context.environment.input.read(
            limit: ItemLimits.defaultMaximumValueLength, what: "the message to sign")
        try await context.withSession(accessGroup: accessGroup) { session throws(KeygateError) in
            let key = try await session.key(labelled: label)
            let algorithm = algorithm ?? (key.type == .p256 ? .ecdsaSignatureMessageX962SHA256 : .ed25519)
            let signature = try await session.keychain.sign(
                message.withUnsafeBytes { Array($0) }, algorithm: algorithm,
                key: KeyQuery(applicationLabel: key.applicationLabel, accessGroup: session.accessGroup),
                context: session.context)
            try context.console.output.write(signature)
        }
        return .success
    }
}
