/// A problem in an input file, located by file, line, column and field.
///
/// Its ``description`` reads `context.json:3:17: biometry.enrolled[1]: expected a string, found a number`,
/// so a person can fix the file from the message alone. Nothing is changed when one is thrown.
public struct InputFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file's path as given.
    public let file: String
    /// 1-based line, or 0 when the problem is with the file as a whole.
    public let line: Int
    /// 1-based column, or 0 when unknown.
    public let column: Int
    /// The key path of the field (`biometry.enrolled[1]`), or empty for the document itself.
    public let field: String
    /// What was wrong.
    public let problem: String

    /// An error at a position.
    public init(file: String, line: Int, column: Int, field: String, problem: String) {
        self.file = file
        self.line = line
        self.column = column
        self.field = field
        self.problem = problem
    }

    /// `file:line:column: field: problem`.
    public var description: String {
        var text = file
        if line > 0 { text += ":\(line)" }
        if column > 0 { text += ":\(column)" }
        text += ": "
        if !field.isEmpty { text += "\(field): " }
        return text + problem
    }
}

/// A value of a parsed input file with its key path, for decoding with precise errors.
package struct JSONField {
    package let node: JSONNode
    package let path: String
    package let file: String

    /// The root of a document parsed from `text`; a syntax error names its position.
    package static func parse(_ text: String, file: String) throws(InputFileError) -> JSONField {
        do {
            return JSONField(node: try JSONParser.parse(text), path: "", file: file)
        } catch {
            throw InputFileError(
                file: file, line: error.line, column: error.column, field: "", problem: "invalid JSON: \(error.message)"
            )
        }
    }

    package init(node: JSONNode, path: String, file: String) {
        self.node = node
        self.path = path
        self.file = file
    }

    /// An error located at this value.
    package func error(_ problem: String) -> InputFileError {
        InputFileError(file: file, line: node.line, column: node.column, field: path, problem: problem)
    }

    private func mismatch(_ expected: String) -> InputFileError {
        error("expected \(expected), found \(node.value.typeName)")
    }

    /// The members of an object, refusing any key not in `allowed`.
    package func object(allowing allowed: [String]) throws(InputFileError) -> [String: JSONField] {
        guard case .object(let members) = node.value else { throw mismatch("an object") }
        var fields: [String: JSONField] = [:]
        for member in members {
            let childPath = path.isEmpty ? member.key : "\(path).\(member.key)"
            guard allowed.contains(member.key) else {
                throw InputFileError(
                    file: file, line: member.line, column: member.column, field: childPath,
                    problem: "unknown key '\(member.key)' (expected one of: \(allowed.joined(separator: ", ")))")
            }
            fields[member.key] = JSONField(node: member.value, path: childPath, file: file)
        }
        return fields
    }

    /// The elements of an array.
    package func array() throws(InputFileError) -> [JSONField] {
        guard case .array(let items) = node.value else { throw mismatch("an array") }
        return items.enumerated().map { JSONField(node: $1, path: "\(path)[\($0)]", file: file) }
    }

    /// A boolean.
    package func bool() throws(InputFileError) -> Bool {
        guard case .bool(let value) = node.value else { throw mismatch("true or false") }
        return value
    }

    /// A whole number.
    package func int() throws(InputFileError) -> Int {
        guard case .number(let literal) = node.value else { throw mismatch("a whole number") }
        guard let value = Int(literal) else { throw error("expected a whole number, found \(literal)") }
        return value
    }

    /// A string.
    package func string() throws(InputFileError) -> String {
        guard case .string(let value) = node.value else { throw mismatch("a string") }
        return value
    }

    /// Nil for JSON `null` (an absent optional value), else this field.
    package func optional() -> JSONField? {
        if case .null = node.value { return nil }
        return self
    }

    /// An array of strings.
    package func stringArray() throws(InputFileError) -> [String] {
        var strings: [String] = []
        for item in try array() { strings.append(try item.string()) }
        return strings
    }

    /// A string that must be one of `choices`.
    package func choice(_ choices: [String]) throws(InputFileError) -> String {
        let value = try string()
        guard choices.contains(value) else {
            throw error("'\(value)' is not one of: \(choices.joined(separator: ", "))")
        }
        return value
    }
}
