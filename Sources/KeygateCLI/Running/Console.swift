import KeygatePolicy

/// Writes messages to a command's standard output and standard error. Secrets never pass
/// through here as text.
struct Console: Sendable {
    /// Standard output.
    let output: any OutputTarget
    /// Standard error.
    let errorOutput: any OutputTarget

    /// Writes `text` and a newline to standard output.
    func out(_ text: String) {
        write(text + "\n", to: output)
    }

    /// Writes one message line to standard error, with its control characters escaped
    /// (``escaped(_:)``), so a name, path or argument echoed in it can never break the line
    /// or drive the terminal: the last line stays `keygate: … (errSecName N)`.
    func err(_ text: String) {
        write(Self.escaped(text) + "\n", to: errorOutput)
    }

    /// Writes a block of lines that keygate wrote itself (a usage text) to standard error, as is.
    func errBlock(_ text: String) {
        write(text + "\n", to: errorOutput)
    }

    /// Text is best effort: a closed stream loses the message, never the command's status.
    private func write(_ text: String, to target: any OutputTarget) {
        try? target.write(Array(text.utf8))
    }

    // MARK: - Failures

    /// Reports a usage error (exit 2): the usage of the command that refused it, then the message.
    /// Reports a usage error: the usage lines of `help` (its first paragraph), where the rest is,
    /// then `keygate: message (errSecParam -50)` as the last line.
    func fail(usage error: UsageError, help: String) -> ExitStatus {
        let usage = help.split(separator: "\n", omittingEmptySubsequences: false).prefix { !$0.isEmpty }
        errBlock(usage.joined(separator: "\n"))
        err("(add --help for the whole help)")
        err("keygate: \(error.message) (\(KeygateStatus.param))")
        return .usage
    }

    /// Reports a failure with a status: the last line is `keygate: message (errSecName number)`.
    func fail(_ error: KeygateError) -> ExitStatus {
        err("keygate: \(error.description)")
        return ExitStatus(status: error.status)
    }

    /// Reports input that cannot be used (a broken policy or context file, exit 2), naming it.
    func refuse(_ error: KeygateError) -> ExitStatus {
        err("keygate: \(error.description)")
        return .usage
    }

    /// Reports a bad input file (exit 2): file, line, field and problem.
    func refuse(_ error: InputFileError) -> ExitStatus {
        refuse(KeygateError(.param, error.description))
    }

    // MARK: - Escaping

    /// `text` with every control character made visible: newline, carriage return and tab as
    /// `\n`, `\r`, `\t`; other C0 characters, DEL, C1 characters and the Unicode line and
    /// paragraph separators as `\u{…}` (ESC is `\u{1b}`). Everything else is unchanged.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                result.append(scalar)
                continue
            }
            let replacement =
                switch scalar {
                case "\n": "\\n"
                case "\r": "\\r"
                case "\t": "\\t"
                default: "\\u{" + String(scalar.value, radix: 16) + "}"
                }
            result.append(contentsOf: replacement.unicodeScalars)
        }
        return String(result)
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1f, 0x7f...0x9f, 0x2028, 0x2029: true
        default: false
        }
    }
}
