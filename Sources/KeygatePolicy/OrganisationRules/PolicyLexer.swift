/// One token of the policy language.
struct PolicyToken: Hashable, Sendable {
    enum Kind: Hashable, Sendable {
        /// A keyword or bare word: letters, digits, `-`, `_`, `.`.
        case word
        /// A double-quoted string (its value, escapes resolved).
        case string
        /// One of `{ } , +`.
        case symbol
        /// The end of the file.
        case end
    }

    let kind: Kind
    let text: String
    let line: Int
    let column: Int

    /// How the token is shown in an error: `'word'`, `"string"`, `end of file`.
    var shown: String {
        switch kind {
        case .word, .symbol: "'\(text)'"
        case .string: "\"\(text)\""
        case .end: "end of file"
        }
    }
}

/// Splits policy text into tokens. Comments run from `#` or `//` to the end of the line.
struct PolicyLexer {
    private let scalars: [Unicode.Scalar]
    private let file: String
    private var index = 0
    private var line = 1
    private var column = 1

    init(_ text: String, file: String) {
        self.scalars = Array(text.unicodeScalars)
        self.file = file
    }

    /// Every token, ending with one `.end`.
    mutating func tokens() throws(PolicyParseError) -> [PolicyToken] {
        var result: [PolicyToken] = []
        while true {
            let token = try next()
            result.append(token)
            if token.kind == .end { return result }
        }
    }

    private static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-", "_", ".": true
        default: false
        }
    }

    private mutating func advance() {
        if scalars[index] == "\n" {
            line += 1
            column = 1
        } else {
            column += 1
        }
        index += 1
    }

    private mutating func next() throws(PolicyParseError) -> PolicyToken {
        skipSpaceAndComments()
        let startLine = line
        let startColumn = column
        guard index < scalars.count else { return PolicyToken(kind: .end, text: "", line: line, column: column) }
        let scalar = scalars[index]
        switch scalar {
        case "{", "}", ",", "+":
            advance()
            return PolicyToken(kind: .symbol, text: String(Character(scalar)), line: startLine, column: startColumn)
        case "\"":
            advance()
            var value = ""
            while true {
                guard index < scalars.count, scalars[index] != "\n" else {
                    throw PolicyParseError(
                        SourceLocation(file: file, line: startLine, column: startColumn),
                        "unterminated string: expected '\"' before the end of the line")
                }
                let current = scalars[index]
                advance()
                if current == "\"" { break }
                if current == "\\" {
                    guard index < scalars.count, scalars[index] == "\"" || scalars[index] == "\\" else {
                        throw PolicyParseError(
                            SourceLocation(file: file, line: line, column: column),
                            "invalid escape in a string: expected '\\\"' or '\\\\'")
                    }
                    value.unicodeScalars.append(scalars[index])
                    advance()
                    continue
                }
                value.unicodeScalars.append(current)
            }
            return PolicyToken(kind: .string, text: value, line: startLine, column: startColumn)
        default:
            guard Self.isWordScalar(scalar) else {
                throw PolicyParseError(
                    SourceLocation(file: file, line: startLine, column: startColumn),
                    "unexpected character '\(scalar.escaped(asASCII: true))'")
            }
            var word = ""
            while index < scalars.count, Self.isWordScalar(scalars[index]) {
                word.unicodeScalars.append(scalars[index])
                advance()
            }
            return PolicyToken(kind: .word, text: word, line: startLine, column: startColumn)
        }
    }

    private mutating func skipSpaceAndComments() {
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == " " || scalar == "\t" || scalar == "\r" || scalar == "\n" {
                advance()
            } else if scalar == "#" || (scalar == "/" && index + 1 < scalars.count && scalars[index + 1] == "/") {
                while index < scalars.count, scalars[index] != "\n" { advance() }
            } else {
                return
            }
        }
    }
}
