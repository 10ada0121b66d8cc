import Foundation

/// Writes to the standard streams. Secrets never pass through here as text.
enum Console {
    /// Writes `text` and a newline to standard output.
    static func out(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// Writes one message line to standard error, with its control characters escaped
    /// (``escaped(_:)``), so a name, path or argument echoed in it can never break the line
    /// or drive the terminal: the last line stays `keygate: … (errSecName N)`.
    static func err(_ text: String) {
        FileHandle.standardError.write(Data((escaped(text) + "\n").utf8))
    }

    /// Writes a block of lines that keygate wrote itself (a usage text) to standard error, as is.
    static func errBlock(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

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
