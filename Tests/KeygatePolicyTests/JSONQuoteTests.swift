import Testing

@testable import KeygatePolicy

/// Issue 10 point 2: strings with nothing to escape are copied whole into rendered JSON; the
/// text is the same as escaping scalar by scalar gives.
@Suite struct JSONQuoteTests {
    @Test(arguments: [
        ("plain text", #""plain text""#),
        ("", #""""#),
        ("caf\u{E9} \u{1F600}", "\"caf\u{E9} \u{1F600}\""),
        ("a\"b\\c", #""a\"b\\c""#),
        ("line\nnext\ttab\r", #""line\nnext\ttab\r""#),
        ("bell\u{07}\u{7F}", "\"bell\\u0007\u{7F}\""),
    ])
    func stringsRenderAsBefore(_ text: String, _ expected: String) {
        #expect(JSONValue.string(text).rendered == expected)
        #expect(
            JSONValue.object([JSONMember("k", .string(text))]).rendered == #"{"k": "# + expected + "}")
    }
}
