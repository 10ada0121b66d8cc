import Glibc

/// Writes to the standard streams. Secrets never pass through here as text.
enum Console {
    /// Writes `text` and a newline to standard output.
    static func out(_ text: String) {
        write(1, text + "\n")
    }

    /// Writes one message line to standard error, with its control characters escaped
    /// (``escaped(_:)``), so a name, path or argument echoed in it can never break the line
    /// or drive the terminal: the last line stays `keygate: … (errSecName N)`.
    static func err(_ text: String) {
        write(2, escaped(text) + "\n")
    }

    /// Writes a block of lines that keygate wrote itself (a usage text) to standard error, as is.
    static func errBlock(_ text: String) {
        write(2, text + "\n")
    }

    /// Writes `text` whole to `descriptor` (a message: a failure to write it is not reported).
    private static func write(_ descriptor: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
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
