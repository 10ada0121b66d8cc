import KeygateItems
import KeygateKeys
import KeygatePolicy

/// `keygate key import`: hands the keeper an existing unencrypted OpenSSH private key read on
/// standard input; it is listed as imported, and used like a key made in the keeper.
struct KeyImportCommand: Command {
    static let configuration = KeyCommand.subcommand(
        "import", summary: "import an OpenSSH private key from standard input",
        options: [KeyOptions.label, ProtectionOptions.accessControl, KeyOptions.accessible, ItemOptions.accessGroup])

    let target: KeyTarget
    let protection: KeyProtectionOptions

    init(parsing arguments: ParsedArguments) {
        target = KeyTarget(arguments)
        protection = KeyProtectionOptions(arguments)
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        let protection = try protection.protection()
        let file = try OpenSSHPrivateKey(file: try KeyInput.read("the private key", context))
        try await context.withSession(accessGroup: target.accessGroup) { session throws(KeygateError) in
            try await session.refuseTakenLabel(target.label)
            let key = try await session.keychain.importKey(
                NewKeyRequest(
                    type: file.type, label: target.label, accessGroup: session.accessGroup, protection: protection),
                privateKey: file.material, context: session.context)
            context.console.out(KeyJSON.line(key))
        }
        return .success
    }
}
