import KeygatePolicy
import KeygateStore

/// The most a credential helper reads from standard input: a description or a token fits
/// many times over.
let credentialInputLimit = 64 * 1024

extension InputSource {
    /// The input, whole, at most ``credentialInputLimit`` bytes.
    func readCredential() throws(KeygateError) -> SecretData {
        try read(limit: credentialInputLimit, what: "the credential")
    }
}

extension String {
    /// The string without the spaces, tabs and line breaks around it.
    func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0.isWhitespace }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
