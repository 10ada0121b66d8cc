import Foundation
import Glibc
import KeygatePolicy
import KeygateTesting
import Testing

@testable import KeygateAudit

/// Issue 10 point 2: a call that writes many records at once (a `list` names every item it
/// returns, in records of at most 64 KiB) goes out in writes of at most a megabyte, never as one
/// buffer as large as all of them; the trail holds every record once, in order, chained.
@Suite struct LargeAppendTests {
    @Test func recordsLargerTogetherThanOneWriteAreAppendedInOrderAndChain() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let sink = JSONLinesAuditSink(path: path)
        // 600 records of about 4 KiB: three writes of at most JSONLinesAuditSink.writeChunk.
        let padding = String(repeating: "s", count: 4000)
        let events = (0..<600).map { index in
            AuditEvent(
                kind: .read, item: .init(accessGroup: "g", account: "user\(index)", service: padding), decision: .allow)
        }
        let records = try sink.append(contentsOf: events, at: Timestamp(seconds: 1))
        let size = records.reduce(0) { $0 + $1.line.utf8.count + 1 }
        #expect(size > 2 * JSONLinesAuditSink.writeChunk)
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(Int(info.st_size) == size)
        let read = try AuditTrailFile.records(at: path)
        #expect(read.map(\.line) == records.map(\.line))
        #expect(read.map(\.sequence) == Array(1...600))
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 600))
    }
}
