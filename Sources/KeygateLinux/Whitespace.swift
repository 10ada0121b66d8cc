extension StringProtocol {
    /// The text without leading and trailing whitespace (`Character.isWhitespace`: spaces, tabs
    /// and line ends), as Foundation's `trimmingCharacters(in: .whitespacesAndNewlines)`.
    ///
    /// Sliced between the first and last other character: building the string from a reversed
    /// sequence of characters went through the standard library's unspecialised generic
    /// initialiser (run-time metadata and conformance lookups, 0.2 ms of a `get` that reads the
    /// boot id).
    package var trimmingWhitespace: String {
        guard let first = firstIndex(where: { !$0.isWhitespace }),
            let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(self[first...last])
    }
}
