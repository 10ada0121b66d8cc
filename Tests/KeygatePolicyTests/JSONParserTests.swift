import KeygatePolicy
import Testing

/// The strict parser behind context files and audit lines.
@Suite struct JSONParserTests {
    static func object(keys count: Int, duplicateLast: Bool = false) -> String {
        var members = (0..<count).map { "\"k\($0)\": \($0)" }
        if duplicateLast { members.append("\"k0\": 0") }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// Issue 9 point 10: 100 000 keys took 19.5 s with a quadratic duplicate check. The
    /// check is a set now; this asserts the result, and finishes at once.
    @Test func anObjectWithManyKeysParses() throws {
        let node = try JSONParser.parse(Self.object(keys: 100_000))
        guard case .object(let members) = node.value else {
            Issue.record("expected an object")
            return
        }
        #expect(members.count == 100_000)
        #expect(members.last?.key == "k99999")
        #expect(members.last?.value.value == .number("99999"))
    }

    @Test func aDuplicateAmongManyKeysIsNamedWithItsPosition() {
        let text = Self.object(keys: 100_000, duplicateLast: true)
        do {
            _ = try JSONParser.parse(text)
            Issue.record("a duplicate key must be refused")
        } catch {
            #expect(error.message == "duplicate key 'k0'")
            #expect(error.line == 1)
            #expect(error.column == text.utf8.count - "\"k0\": 0}".utf8.count + 1)
        }
    }

    @Test func duplicatesInNestedObjectsAreSeparate() throws {
        _ = try JSONParser.parse(#"{"a": {"x": 1}, "b": {"x": 2}}"#)
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(#"{"a": {"x": 1, "x": 2}}"#) }
    }
}
