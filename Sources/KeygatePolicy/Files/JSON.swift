/// A JSON document that remembers where each value came from, so that errors in input
/// files can name the line and column. Keys keep their order.
package struct JSONNode: Sendable, Equatable {
    /// The value.
    package var value: JSONValue
    /// 1-based line of the value's first character.
    package var line: Int
    /// 1-based column of the value's first character.
    package var column: Int

    package init(_ value: JSONValue, line: Int = 0, column: Int = 0) {
        self.value = value
        self.line = line
        self.column = column
    }
}

/// A JSON value; objects keep their members in order.
package indirect enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number, kept as its literal text.
    case number(String)
    case string(String)
    case array([JSONNode])
    case object([JSONMember])

    /// The name of the JSON type, for messages ("a string", "an object").
    package var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// Compact JSON text, members in order.
    package var rendered: String {
        var out = ""
        render(into: &out)
        return out
    }

    private func render(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .number(let literal): out += literal
        case .string(let text): Self.quote(text, into: &out)
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += ", " }
                item.value.render(into: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { out += ", " }
                Self.quote(member.key, into: &out)
                out += ": "
                member.value.value.render(into: &out)
            }
            out += "}"
        }
    }

    private static func quote(_ text: String, into out: inout String) {
        out += "\""
        // Nothing to escape (the usual case): the text goes in whole, not scalar by scalar.
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x22 && $0 != 0x5C }) {
            out += text
            out += "\""
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

/// One member of a JSON object.
package struct JSONMember: Sendable, Equatable {
    package var key: String
    package var line: Int
    package var column: Int
    package var value: JSONNode

    package init(_ key: String, _ value: JSONValue, line: Int = 0, column: Int = 0) {
        self.key = key
        self.line = line
        self.column = column
        self.value = JSONNode(value)
    }

    package init(key: String, line: Int, column: Int, value: JSONNode) {
        self.key = key
        self.line = line
        self.column = column
        self.value = value
    }
}

/// A strict JSON (RFC 8259) parser that records positions.
package struct JSONParser {
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0

    /// Parses `text`; the error names the line and column of the problem.
    package static func parse(_ text: String) throws(JSONSyntaxError) -> JSONNode {
        try parse(bytes: Array(text.utf8))
    }

    /// Parses UTF-8 `bytes`; the error names the line and column of the problem.
    package static func parse(bytes: [UInt8]) throws(JSONSyntaxError) -> JSONNode {
        var parser = JSONParser(bytes: bytes)
        parser.skipSpace()
        let node = try parser.parseValue(depth: 0)
        parser.skipSpace()
        guard parser.index == parser.bytes.count else { throw parser.fail("unexpected text after the JSON value") }
        return node
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private var column: Int { index - lineStart + 1 }

    private func fail(_ message: String) -> JSONSyntaxError {
        JSONSyntaxError(line: line, column: column, message: message)
    }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): index += 1
            case UInt8(ascii: "\n"):
                index += 1
                line += 1
                lineStart = index
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONNode {
        guard depth < 64 else { throw fail("nesting deeper than 64 levels") }
        guard index < bytes.count else { throw fail("unexpected end of input, expected a value") }
        let (startLine, startColumn) = (line, column)
        let value: JSONValue
        switch bytes[index] {
        case UInt8(ascii: "{"): value = try parseObject(depth: depth)
        case UInt8(ascii: "["): value = try parseArray(depth: depth)
        case UInt8(ascii: "\""): value = .string(try parseString())
        case UInt8(ascii: "t"): try literal("true"); value = .bool(true)
        case UInt8(ascii: "f"): try literal("false"); value = .bool(false)
        case UInt8(ascii: "n"): try literal("null"); value = .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): value = .number(try parseNumber())
        // The character itself is not quoted: the input may be a secret (docker-credential's
        // store reads its password as JSON); the line and column place it.
        default: throw fail("unexpected character where a value was expected")
        }
        return JSONNode(value, line: startLine, column: startColumn)
    }

    private mutating func literal(_ word: String) throws(JSONSyntaxError) {
        let expected = Array(word.utf8)
        guard index + expected.count <= bytes.count, Array(bytes[index..<index + expected.count]) == expected else {
            throw fail("invalid literal, expected '\(word)'")
        }
        index += expected.count
    }

    private mutating func parseObject(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        index += 1
        var members: [JSONMember] = []
        // A set of the keys seen so far keeps the duplicate check linear in the object's size.
        var seen = Set<String>()
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a quoted key") }
            let (keyLine, keyColumn) = (line, column)
            let key = try parseString()
            guard seen.insert(key).inserted else {
                throw JSONSyntaxError(line: keyLine, column: keyColumn, message: "duplicate key '\(key)'")
            }
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw fail("expected ':' after the key")
            }
            index += 1
            skipSpace()
            let value = try parseValue(depth: depth + 1)
            members.append(JSONMember(key: key, line: keyLine, column: keyColumn, value: value))
            skipSpace()
            guard index < bytes.count else { throw fail("unexpected end of input in an object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "}") else { throw fail("expected ',' or '}' in an object") }
            index += 1
            return .object(members)
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        index += 1
        var items: [JSONNode] = []
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            skipSpace()
            items.append(try parseValue(depth: depth + 1))
            skipSpace()
            guard index < bytes.count else { throw fail("unexpected end of input in an array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "]") else { throw fail("expected ',' or ']' in an array") }
            index += 1
            return .array(items)
        }
    }

    private mutating func parseString() throws(JSONSyntaxError) -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        var raw: [UInt8] = []
        func flush() {
            if !raw.isEmpty {
                scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars)
                raw.removeAll()
            }
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                flush()
                return String(scalars)
            case UInt8(ascii: "\\"):
                flush()
                index += 1
                guard index < bytes.count else { break }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{8}")
                case UInt8(ascii: "f"): scalars.append("\u{c}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { throw fail("unpaired surrogate in a string") }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw fail("invalid surrogate pair") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw fail("invalid \\u escape") }
                    scalars.append(scalar)
                default: throw fail("invalid escape in a string")
                }
            case 0..<0x20:
                throw fail("control character in a string")
            default:
                raw.append(byte)
                index += 1
            }
        }
        throw fail("unterminated string")
    }

    private mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw fail("invalid \\u escape") }
        var value: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw fail("invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
        }
        index += 4
        return value
    }

    private mutating func parseNumber() throws(JSONSyntaxError) -> String {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        func digits() -> Int {
            let begin = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - begin
        }
        let integerStart = index
        let integerDigits = digits()
        guard integerDigits > 0 else { throw fail("invalid number") }
        guard integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else {
            throw fail("invalid number: leading zero")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw fail("invalid number") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digits() > 0 else { throw fail("invalid number") }
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }
}

/// A JSON syntax error at a position.
package struct JSONSyntaxError: Error, Sendable {
    package let line: Int
    package let column: Int
    package let message: String
}
