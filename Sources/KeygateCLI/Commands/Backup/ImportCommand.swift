import Keygate
import KeygatePolicy

/// `keygate import FILE`: restores an encrypted backup, all or nothing.
struct ImportCommand: Command {
    static let configuration = CommandConfiguration(
        name: "import", summary: "restore an encrypted backup",
        discussion: """
            usage: keygate import FILE [--backup-passphrase-fd N]

            Restores a backup, all or nothing: a wrong passphrase or a changed file (exit 9), an item
            that exists already (exit 4), or any other failure imports nothing. A FILE that cannot be
            read, is not a regular file or is over 256 MiB is a bad input file (exit 2).
            """,
        options: [ItemOptions.accessGroup, BackupPassphraseOption.descriptor], maximumPositionals: 1,
        loadsPolicies: true, choosesMode: true)

    /// The backup file named: one (``validate()`` refuses none, the parser more).
    let files: [String]
    /// The access group an option names, or nil for `keygate`.
    let accessGroup: String?
    /// Where the backup passphrase comes from.
    let passphrase: BackupPassphraseOption

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        files = arguments.positionals
        accessGroup = arguments.value(ItemOptions.accessGroup)
        passphrase = try BackupPassphraseOption(arguments)
    }

    func validate() throws(UsageError) {
        guard !files.isEmpty else { throw UsageError("missing the backup FILE") }
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        try context.requireEmbedded("import")
        let path = files[0]
        // The file is read (and its size checked) before anything is opened: a missing,
        // unreadable or oversized backup is a bad input file (exit 2) and creates no store.
        let data: [UInt8]
        do throws(InputFileError) {
            data = try InputFile.read(path, limit: InputFile.backupLimit)
        } catch {
            return context.console.refuse(error)
        }
        try await context.withSession(accessGroup: accessGroup) { session throws(KeygateError) in
            let passphrase = try passphrase.passphrase(confirm: false)
            let count = try await session.embeddedKeychain.importBackup(
                data, passphrase: passphrase, context: session.context)
            context.console.err("keygate: imported \(count) item\(count == 1 ? "" : "s") from \(path)")
        }
        return .success
    }
}
