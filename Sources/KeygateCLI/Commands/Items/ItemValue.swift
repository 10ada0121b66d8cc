import KeygatePolicy
import KeygateStore

/// The value `add` and `update` store.
enum ItemValue {
    /// Asked at a hidden prompt when standard input is a terminal (``TerminalValuePrompt``),
    /// else standard input byte for byte, in wiped memory; never more than the store's value
    /// limit (16 MiB) plus one byte is read, so an endless or huge input is refused, not buffered.
    static func read(for item: ItemOptions, _ context: CommandContext) throws(KeygateError) -> SecretData {
        let input = context.environment.input
        if input.isTerminal {
            return try TerminalValuePrompt.ask(for: "\(item.service)/\(item.account)", global: context.global)
        }
        if context.global.pam.passphraseDescriptor == 0 {
            throw KeygateError(
                .param,
                "--passphrase-fd 0 would read the passphrase from the value's standard input; use another descriptor")
        }
        return try input.read(limit: ItemLimits.defaultMaximumValueLength, what: "the value")
    }
}
