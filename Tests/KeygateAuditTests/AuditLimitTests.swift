import Foundation
import KeygateAudit
import KeygatePolicy
import KeygateTesting
import Testing

/// Issue 9 point 9: audit lines are bounded, with a clear status.
@Suite struct AuditLimitTests {
    /// A record longer than a trail line may hold is never written (the decision is refused).
    @Test func anOversizedAuditRecordIsNotWritten() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let sink = JSONLinesAuditSink(path: path)
        try sink.append(AuditTrailFileTests.event(1), at: Timestamp(seconds: 1))
        var event = AuditTrailFileTests.event(2)
        event.notes = [.unrecognised(String(repeating: "x", count: 70_000))]
        do {
            try sink.append(event, at: Timestamp(seconds: 2))
            Issue.record("an oversized record must be refused")
        } catch {
            #expect(error.status == .io)
            #expect(error.message.contains("longer than the 65536"))
        }
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 1))
    }
}
