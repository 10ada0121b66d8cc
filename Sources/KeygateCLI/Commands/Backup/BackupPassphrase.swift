import KeygatePAM
import KeygatePolicy
import KeygateStore

/// `--backup-passphrase-fd` and the backup passphrase it gives (else the terminal asks).
struct BackupPassphraseOption: Sendable {
    static let descriptor = OptionSpec(
        "backup-passphrase-fd", .descriptor, help: "read the backup passphrase from this descriptor")

    /// The descriptor given, or nil for the terminal.
    let descriptor: Int32?

    /// Reads the option.
    /// - Throws: a usage error naming it when the word is no descriptor number.
    init(_ arguments: ParsedArguments) throws(UsageError) {
        descriptor = try arguments.descriptor(Self.descriptor)
    }

    /// The backup passphrase: from the descriptor, else asked on the terminal (twice when
    /// `confirm`, and the two must match).
    /// - Throws: `errSecInteractionNotAllowed` without a terminal, `errSecUserCanceled` when
    ///   none is given, `errSecParam` when the two differ.
    func passphrase(confirm: Bool) throws(KeygateError) -> SecretData {
        let source: any PassphraseSource
        if let descriptor {
            source = FileDescriptorPassphraseSource(descriptor: descriptor)
        } else if let terminal = TerminalPassphraseSource.open() {
            source = terminal
        } else {
            throw KeygateError(
                .interactionNotAllowed, "no terminal to ask for the backup passphrase; use --backup-passphrase-fd")
        }
        func ask(_ text: String) throws(KeygateError) -> SecretData {
            let prompt = PassphrasePrompt(
                text: text, echo: false, service: "backup", factor: .applicationPassword, reason: "")
            guard let passphrase = source.passphrase(for: prompt) else {
                throw KeygateError(.userCanceled, "no backup passphrase given")
            }
            return passphrase.withUnsafeBytes { SecretData(bytes: $0) }
        }
        let first = try ask("Backup passphrase: ")
        if confirm && descriptor == nil {
            guard try ask("Repeat the backup passphrase: ") == first else {
                throw KeygateError(.param, "the two backup passphrases differ")
            }
        }
        return first
    }
}
