import KeygateItems
import KeygatePolicy

/// `keygate key sign`: signs standard input with a key, after its access control allows it.
struct KeySignCommand: Command {
    static let configuration = KeyCommand.subcommand(
        "sign", summary: "sign standard input with a key",
        options: [KeyOptions.label, KeyOptions.algorithm, ItemOptions.accessGroup])

    let target: KeyTarget
    let algorithm: SignatureAlgorithm?

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        target = KeyTarget(arguments)
        algorithm = try arguments.choice(KeyOptions.algorithm).flatMap(SignatureAlgorithm.init(named:))
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        let message = try KeyInput.read("the message to sign", context)
        try await target.withKey(context) { (session, key) throws(KeygateError) in
            let algorithm = algorithm ?? (key.type == .p256 ? .ecdsaSignatureMessageX962SHA256 : .ed25519)
            let signature = try await session.keychain.sign(
                message.withUnsafeBytes { Array($0) }, algorithm: algorithm, key: KeyTarget.query(key, in: session),
                context: session.context)
            try context.console.output.write(signature)
        }
        return .success
    }
}
