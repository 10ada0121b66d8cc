import Foundation
import KeygatePolicy
import KeygateTesting
import Testing

@testable import KeygateAudit

/// Issue 10 point 1 (session 21): an audit line is rendered through a raw byte cursor into a
/// buffer of fixed room, and rendered again into a larger one when it does not fit. Whatever
/// the line's length, the bytes are the whole line, escaped as before.
@Suite struct AuditLineCursorTests {
    /// An event whose line is `scale` times longer than the writer's first buffer, with every
    /// kind of escape in its texts.
    private static func longEvent(scale: Int) -> AuditEvent {
        let text = String(repeating: "quote \" back \\ line \n tab \t bell \u{7} é 😀 ", count: 60 * scale)
        var event = AuditEvent(
            kind: .read, item: ItemIdentity(accessGroup: "g", account: text, service: "api"),
            accessControl: TestControls.presence, ruleIDs: ["rule-\(text.count)"], decision: .allow,
            notes: [.refused(text)], processID: -1, userID: .max)
        event.more = [
            AuditEvent(kind: .read, item: ItemIdentity(accessGroup: "g", account: "b", service: text), decision: .deny)
        ]
        return event
    }

    @Test(arguments: [1, 3, 6])
    func aLongLineIsRenderedWholeAndParsesBack(scale: Int) throws {
        let event = Self.longEvent(scale: scale)
        var head = AuditHead(genesis: String(repeating: "0", count: 64))
        let record = head.seal(event, at: Timestamp(seconds: 5))
        #expect(record.line.utf8.count > 2048 * scale)
        // Each text appears escaped exactly as the escaper writes it.
        var escaped: [UInt8] = []
        escaped.appendJSONEscaped(event.item!.account)
        #expect(record.line.contains("\"account\": \"" + String(decoding: escaped, as: UTF8.self) + "\""))
        #expect(!record.line.contains("\n"))
        let parsed = try AuditRecord(line: record.line, file: "trail", lineNumber: 1)
        #expect(parsed == record)
        #expect(parsed.event == event)
    }

    @Test func aLongLineStoredBetweenFlushesIsTheLineAppendWouldWrite() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let sink = GroupCommitTestSinks.sink(path, records: 8, idle: .seconds(60))
        let events = [
            AuditEvent(kind: .read, decision: .allow), Self.longEvent(scale: 2),
            AuditEvent(kind: .read, decision: .deny), Self.longEvent(scale: 5),
        ]
        for (index, event) in events.enumerated() { try sink.store(event, at: Timestamp(seconds: Int64(index))) }
        sink.flush()
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 4))
        let lines = try AuditTrailFile.lines(at: path)
        let records = try AuditTrailFile.records(at: path)
        try #require(lines.count == 4)
        var head = AuditHead(genesis: records[0].previousHash)
        for (index, event) in events.enumerated() {
            let expected = head.seal(event, at: Timestamp(seconds: Int64(index)))
            #expect(Array(lines[index].utf8) == Array(expected.line.utf8), "line \(index + 1)")
        }
    }

    @Test func aWriteThatDoesNotFitWritesNothingAndMarksTheCursor() {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 8) { buffer in
            var cursor = LineCursor(base: buffer.baseAddress!, capacity: 8)
            cursor.write("abcde")
            #expect(cursor.count == 5 && !cursor.overflowed)
            cursor.write("fghi")
            #expect(cursor.count == 5 && cursor.overflowed)
            cursor.write(UInt8(ascii: "z"))  // would fit, but the line is already incomplete
            #expect(cursor.count == 5)
            #expect(Array(buffer[..<5]) == Array("abcde".utf8))
        }
    }

    /// A pass that overflows still measures the whole line (`needed`), so a line of any length
    /// takes at most one more pass, into a buffer of exactly that room.
    @Test func aPassThatDoesNotFitMeasuresTheWholeLine() throws {
        let event = Self.longEvent(scale: 40)
        var head = AuditHead(genesis: String(repeating: "0", count: 64))
        let line = Array(head.seal(event, at: Timestamp(seconds: 5)).line.utf8)
        #expect(line.count > 100_000)
        let measured = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { buffer in
            var cursor = LineCursor(base: buffer.baseAddress!, capacity: 256)
            cursor.record(
                sequence: 1, time: Timestamp(seconds: 5), previousHash: String(repeating: "0", count: 64),
                event: event)
            #expect(cursor.overflowed && cursor.count <= 256)
            return cursor.needed
        }
        #expect(measured == line.count)
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: measured) { buffer in
            var cursor = LineCursor(base: buffer.baseAddress!, capacity: measured)
            cursor.record(
                sequence: 1, time: Timestamp(seconds: 5), previousHash: String(repeating: "0", count: 64),
                event: event)
            try #require(!cursor.overflowed && cursor.count == measured)
            #expect(Array(buffer[..<measured]) == line)
        }
    }

    @Test(arguments: [Int64.min, -1, 0, 7, 10, 1_000_000_007, Int64.max])
    func decimalsAreTheirDescription(value: Int64) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { buffer in
            var cursor = LineCursor(base: buffer.baseAddress!, capacity: 32)
            cursor.writeDecimal(value)
            #expect(String(decoding: buffer[..<cursor.count], as: UTF8.self) == String(value))
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { buffer in
            var cursor = LineCursor(base: buffer.baseAddress!, capacity: 32)
            cursor.writeDecimal(UInt64.max)
            #expect(String(decoding: buffer[..<cursor.count], as: UTF8.self) == String(UInt64.max))
        }
    }
}
