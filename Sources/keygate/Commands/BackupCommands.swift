import FoundationEssentials
import Glibc
import Keygate
import KeygatePAM
import KeygatePolicy
import KeygateStore

/// `keygate export --to FILE` and `keygate import FILE`: encrypted backups of migratable items.
enum BackupCommands {
    static let options: [Arguments.Option] = [
        .init(name: "to", value: "FILE", help: "the backup file to create (export)"),
        .init(name: "access-group", short: "g", value: "G", help: "the access group (default: keygate)"),
        .init(name: "backup-passphrase-fd", value: "N", help: "read the backup passphrase from this descriptor"),
    ]

    /// Import's options: export's, less the file to create.
    static let importOptions = options.filter { $0.name != "to" }

    static let exportHelp = """
        usage: keygate export --to FILE [--backup-passphrase-fd N]

        Writes an encrypted backup (Argon2id + XChaCha20-Poly1305) of the items that may move to
        another device; ThisDeviceOnly items are never exported. Reading protected items asks for
        a proof. The backup passphrase is asked twice on the terminal, or read from a descriptor.
        FILE must not exist yet.

        \(Arguments.helpLines(options))
        """

    static let importHelp = """
        usage: keygate import FILE [--backup-passphrase-fd N]

        Restores a backup, all or nothing: a wrong passphrase or a changed file (exit 9), an item
        that exists already (exit 4), or any other failure imports nothing.

        \(Arguments.helpLines(importOptions))
        """

    @Sendable static func export(_ global: GlobalOptions, _ words: ArraySlice<String>) async -> ExitStatus {
        await ItemCommands.run(words, options: options, required: ["to"], help: exportHelp, global: global) {
            arguments, session in
            let path = try arguments.required("to")
            let passphrase = try backupPassphrase(arguments, confirm: true)
            let backup = try await session.keychain.exportBackup(passphrase: passphrase, context: session.context)
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                throw KeygateError(
                    .io,
                    "cannot create \(path): \(String(cString: strerror(errno))) (an existing file is never overwritten)"
                )
            }
            defer { close(descriptor) }
            let written = backup.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard written == backup.count, fsync(descriptor) == 0 else {
                throw KeygateError(.io, "cannot write \(path)")
            }
            Console.err("keygate: exported to \(path)")
        }
    }

    @Sendable static func `import`(_ global: GlobalOptions, _ words: ArraySlice<String>) async -> ExitStatus {
        await ItemCommands.run(
            words, options: importOptions, required: [], positionals: 1, help: importHelp, global: global
        ) {
            arguments, session in
            guard let path = arguments.positionals.first else {
                throw Arguments.UsageError(message: "missing the backup FILE")
            }
            let data: [UInt8]
            do throws(InputFileError) {
                data = try InputFile.read(path, limit: InputFile.backupLimit)
            } catch {
                throw KeygateError(.param, error.description)
            }
            let passphrase = try backupPassphrase(arguments, confirm: false)
            let count = try await session.keychain.importBackup(
                data, passphrase: passphrase, context: session.context)
            Console.err("keygate: imported \(count) item\(count == 1 ? "" : "s") from \(path)")
        }
    }

    /// The backup passphrase: from the descriptor, else asked on the terminal (twice to confirm).
    static func backupPassphrase(_ arguments: Arguments, confirm: Bool) throws -> SecretData {
        let source: any PassphraseSource
        if let text = arguments.values["backup-passphrase-fd"] {
            guard let descriptor = Int32(text), descriptor >= 0 else {
                throw Arguments.UsageError(message: "--backup-passphrase-fd needs a descriptor number")
            }
            source = FileDescriptorPassphraseSource(descriptor: descriptor)
        } else if let terminal = TerminalPassphraseSource.open() {
            source = terminal
        } else {
            throw KeygateError(
                .interactionNotAllowed, "no terminal to ask for the backup passphrase; use --backup-passphrase-fd")
        }
        func ask(_ text: String) throws -> SecretData {
            let prompt = PassphrasePrompt(
                text: text, echo: false, service: "backup", factor: .applicationPassword, reason: "")
            guard let passphrase = source.passphrase(for: prompt) else {
                throw KeygateError(.userCanceled, "no backup passphrase given")
            }
            return passphrase.withUnsafeBytes { SecretData(bytes: $0) }
        }
        let first = try ask("Backup passphrase: ")
        if confirm && arguments.values["backup-passphrase-fd"] == nil {
            guard try ask("Repeat the backup passphrase: ") == first else {
                throw KeygateError(.param, "the two backup passphrases differ")
            }
        }
        return first
    }
}
