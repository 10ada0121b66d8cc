// MARK: - Decoding a policy test file with precise errors

extension PolicyTestFile {
    /// Decodes a policy test file the way context files are decoded: unknown keys are errors,
    /// so a misspelled key (`"statsu"`) cannot make a case check nothing.
    /// - Parameters:
    ///   - text: the file's contents.
    ///   - file: the path used in error messages.
    /// - Throws: ``InputFileError`` naming the line, column and field of the first problem
    ///   (an unknown key, a missing required key, a value of the wrong type).
    public init(parsing text: String, file: String) throws(InputFileError) {
        try self.init(field: JSONField.parse(text, file: file))
    }

    package init(field root: JSONField) throws(InputFileError) {
        let top = try root.object(allowing: ["policies", "cases"])
        let policies = try Self.required(top, "policies", in: root).stringArray()
        var cases: [PolicyCase] = []
        for entry in try Self.required(top, "cases", in: root).array() {
            cases.append(try PolicyCase(field: entry))
        }
        self.init(policies: policies, cases: cases)
    }

    /// The member `key` of `members`, or an error located at `parent` naming the missing key.
    static func required(_ members: [String: JSONField], _ key: String, in parent: JSONField) throws(InputFileError)
        -> JSONField
    {
        guard let field = members[key] else { throw parent.error("missing key '\(key)'") }
        return field
    }
}

extension PolicyCase {
    package init(field entry: JSONField) throws(InputFileError) {
        let members = try entry.object(allowing: [
            "name", "operation", "service", "account", "accessGroup", "label", "program", "accessControl",
            "accessible", "expect",
        ])
        let expectField = try PolicyTestFile.required(members, "expect", in: entry)
        let expect = try expectField.object(allowing: ["decision", "rules", "status", "freshWithin", "requirements"])
        self.init(
            name: try PolicyTestFile.required(members, "name", in: entry).string(),
            operation: try PolicyTestFile.required(members, "operation", in: entry).string(),
            service: try members["service"]?.optional()?.string(),
            account: try members["account"]?.optional()?.string(),
            accessGroup: try members["accessGroup"]?.optional()?.string(),
            label: try members["label"]?.optional()?.string(),
            program: try members["program"]?.optional()?.string(),
            accessControl: try members["accessControl"]?.optional()?.string(),
            accessible: try members["accessible"]?.optional()?.string(),
            expect: Expectation(
                decision: try PolicyTestFile.required(expect, "decision", in: expectField).string(),
                rules: try PolicyTestFile.required(expect, "rules", in: expectField).stringArray(),
                status: try expect["status"]?.optional()?.string(),
                freshWithin: try expect["freshWithin"]?.optional()?.int(),
                requirements: try expect["requirements"]?.optional()?.stringArray()))
    }
}
