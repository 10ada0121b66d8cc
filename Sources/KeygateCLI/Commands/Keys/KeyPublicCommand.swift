import KeygateItems
import KeygateKeys
import KeygatePolicy

/// `keygate key public`: the public half, in OpenSSH, PEM or raw form (no proof needed).
struct KeyPublicCommand: Command {
    static let configuration = KeyCommand.subcommand(
        "public", summary: "print a key's public half",
        options: [KeyOptions.label, KeyOptions.format, ItemOptions.accessGroup])

    let target: KeyTarget
    let format: PublicKeyFormat

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        target = KeyTarget(arguments)
        format = try arguments.choice(KeyOptions.format).flatMap(PublicKeyFormat.init(rawValue:)) ?? .openssh
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        try await target.withKey(context) { (_, key) throws(KeygateError) in
            let publicKey = try PublicKey(type: key.type, bytes: key.publicKey)
            switch format {
            case .openssh: context.console.out(publicKey.openSSH(comment: target.label))
            case .pem: try context.console.output.write(Array(publicKey.pem.utf8))
            case .x963: try context.console.output.write(publicKey.externalRepresentation)
            }
        }
        return .success
    }
}
