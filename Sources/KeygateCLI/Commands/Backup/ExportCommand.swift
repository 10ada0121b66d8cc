import Keygate
import KeygatePolicy

/// `keygate export --to FILE`: an encrypted backup of the items that may migrate.
struct ExportCommand: Command {
    static let destination = OptionSpec("to", .path("FILE"), required: true, help: "the backup file to create")

    static let configuration = CommandConfiguration(
        name: "export", summary: "write an encrypted backup of the items that may migrate",
        discussion: """
            usage: keygate export --to FILE [--backup-passphrase-fd N]

            Writes an encrypted backup (Argon2id + XChaCha20-Poly1305) of the items that may move to
            another device; ThisDeviceOnly items are never exported. Reading protected items asks for
            a proof. The backup passphrase is asked twice on the terminal, or read from a descriptor.
            FILE must not exist yet.
            """,
        options: [destination, ItemOptions.accessGroup, BackupPassphraseOption.descriptor], loadsPolicies: true,
        choosesMode: true)

    /// The file to create.
    let path: String
    /// The access group an option names, or nil for `keygate`.
    let accessGroup: String?
    /// Where the backup passphrase comes from.
    let passphrase: BackupPassphraseOption

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        path = arguments.required(Self.destination)
        accessGroup = arguments.value(ItemOptions.accessGroup)
        passphrase = try BackupPassphraseOption(arguments)
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        try context.requireEmbedded("export")
        try await context.withSession(accessGroup: accessGroup) { session throws(KeygateError) in
            let passphrase = try passphrase.passphrase(confirm: true)
            let backup = try await session.embeddedKeychain.exportBackup(
                passphrase: passphrase, context: session.context)
            try NewFile.create(path, bytes: backup)
            context.console.err("keygate: exported to \(path)")
        }
        return .success
    }
}
