extension StringProtocol {
    /// The text without leading and trailing whitespace (`Character.isWhitespace`: spaces, tabs
    /// and line ends), as Foundation's `trimmingCharacters(in: .whitespacesAndNewlines)`.
    package var trimmingWhitespace: String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
