extension StringProtocol {
    /// The text without leading and trailing whitespace (`Character.isWhitespace`: spaces, tabs
    /// and line ends), as Foundation's `trimmingCharacters(in: .whitespacesAndNewlines)`.
    ///
    /// Sliced between the first and last other character, never built from a reversed sequence
    /// of characters, which goes through the standard library's unspecialised generic
    /// initialiser (run-time metadata and conformance lookups a short process pays for).
    package var trimmingWhitespace: String {
        guard let first = firstIndex(where: { !$0.isWhitespace }),
            let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(self[first...last])
    }
}
