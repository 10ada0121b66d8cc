import KeygatePAM
import KeygatePolicy
import KeygateStore

/// The hidden prompt `add` and `update` show when their standard input is a terminal: the
/// value is asked twice on `/dev/tty` with echo off, through the same reader as passphrases
/// (``TerminalPassphraseSource``), and must be typed the same both times.
enum TerminalValuePrompt {
    /// The longest value accepted at the prompt; longer values come from a pipe or a file.
    static let maximumLength = 65536

    /// The line typed (without its newline) for the item named `item` (`service/account`).
    ///
    /// - Throws: `errSecUserCanceled` on Ctrl-C or Ctrl-D, `errSecParam` when the two lines
    ///   differ or one is too long, `errSecInteractionNotAllowed` with `--no-interaction` or
    ///   when the terminal cannot be opened. Nothing typed appears in a message.
    static func ask(for item: String, global: GlobalOptions) throws(KeygateError) -> SecretData {
        guard !global.pam.noInteraction else {
            throw KeygateError(
                .interactionNotAllowed,
                "standard input is a terminal and --no-interaction forbids asking; pipe the value")
        }
        guard let terminal = TerminalPassphraseSource.open() else {
            throw KeygateError(.interactionNotAllowed, "cannot open the terminal to ask for the value; pipe it")
        }
        let name = Console.escaped(item)
        let first = try read(terminal, prompt: "Value for \(name): ")
        let second = try read(terminal, prompt: "Again: ")
        guard first == second else { throw KeygateError(.param, "the two values typed differ; nothing was changed") }
        return first
    }

    private static func read(_ terminal: TerminalPassphraseSource, prompt: String) throws(KeygateError) -> SecretData {
        switch terminal.readHiddenLine(prompt: prompt, maximumLength: maximumLength) {
        case .line(let line): return line.withUnsafeBytes { SecretData(bytes: $0) }
        case .cancelled: throw KeygateError(.userCanceled, "cancelled; nothing was changed")
        case .tooLong:
            throw KeygateError(.param, "the value typed is longer than \(maximumLength) bytes; pipe it instead")
        }
    }
}
