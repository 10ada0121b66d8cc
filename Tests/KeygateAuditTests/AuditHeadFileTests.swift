import KeygatePolicy
import Testing

@testable import KeygateAudit

/// Issue 10 point 1: the head written on every append is laid out without the JSON renderer,
/// byte for byte as the renderer lays it out (readers and older writers parse the same line).
@Suite struct AuditHeadFileTests {
    private func rendered(_ head: AuditHead) -> [UInt8] {
        var bytes = Array(head.line.utf8)
        bytes += [UInt8](repeating: 32, count: max(AuditHeadFile.width - 1 - bytes.count, 0))
        return bytes + [10]
    }

    @Test(arguments: [
        AuditHead(genesis: String(repeating: "0f", count: 32)),
        AuditHead(genesis: String(repeating: "ab", count: 32), sequence: 9_223_372_036_854_775_807, hash: "Zz09"),
        // Anything to escape, or too long for the fast path: the renderer's bytes.
        AuditHead(genesis: #"a"b\c"#, sequence: 3, hash: "é"),
        AuditHead(genesis: String(repeating: "a", count: 300)),
    ])
    func theHeadLineIsTheRenderersLine(_ head: AuditHead) throws {
        let bytes = AuditHeadFile.bytes(of: head)
        #expect(bytes == rendered(head))
        if head.line.utf8.count < AuditHeadFile.width {
            #expect(bytes.count == AuditHeadFile.width)
        }
        var line = bytes[...]
        while let last = line.last, last == 10 || last == 32 { line = line.dropLast() }
        #expect(try AuditHead(line: String(decoding: line, as: UTF8.self), file: "head") == head)
    }

    /// A head in the writer's own layout is read without the JSON parser, to the head the
    /// parser reads; any other text is left to the parser (nil here).
    @Test(arguments: [
        AuditHead(genesis: String(repeating: "0f", count: 32)),
        AuditHead(genesis: String(repeating: "ab", count: 32), sequence: 9_223_372_036_854_775_807, hash: "Zz09"),
        AuditHead(genesis: "", sequence: 10, hash: ""),
    ])
    func aPlainHeadIsReadAsTheParserReadsIt(_ head: AuditHead) throws {
        var line = AuditHeadFile.bytes(of: head)[...]
        while let last = line.last, last == 10 || last == 32 { line = line.dropLast() }
        #expect(AuditHeadFile.plainHead(line) == head)
        #expect(try AuditHead(line: String(decoding: line, as: UTF8.self), file: "head") == head)
    }

    @Test(arguments: [
        #"{"genesis": "ab", "sequence": 01, "hash": "cd"}"#,
        #"{"genesis": "ab", "sequence": -1, "hash": "cd"}"#,
        #"{"genesis": "ab", "sequence": 9223372036854775808, "hash": "cd"}"#,
        #"{"genesis": "ab", "sequence": , "hash": "cd"}"#,
        #"{"genesis": "a\"b", "sequence": 1, "hash": "cd"}"#,
        #"{"genesis": "ab", "sequence": 1, "hash": "cd"} "#,
        #"{"genesis": "ab", "sequence": 1, "hash": "cd", "more": 1}"#,
        #"{"genesis":"ab","sequence":1,"hash":"cd"}"#,
        #"{"hash": "cd", "sequence": 1, "genesis": "ab"}"#,
        #"{"genesis": "ab", "sequence": 1, "hash": "cd""#,
    ])
    func anyOtherTextIsLeftToTheParser(_ text: String) {
        #expect(AuditHeadFile.plainHead(Array(text.utf8)[...]) == nil)
    }

    /// Valid heads in another layout (spacing, key order) are still read, by the parser.
    @Test(arguments: [
        #"{"genesis":"ab","sequence":1,"hash":"cd"}"#,
        #"{"hash": "cd", "sequence": 1, "genesis": "ab"}"#,
    ])
    func aHeadInAnotherLayoutIsStillRead(_ text: String) throws {
        #expect(try AuditHead(line: text, file: "head") == AuditHead(genesis: "ab", sequence: 1, hash: "cd"))
    }
}
