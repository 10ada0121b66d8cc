import Foundation
import KeygateAudit
import KeygatePolicy
import KeygateTesting
import Testing

/// Tamper evidence of the hash chain, independent of where the trail is kept.
@Suite struct AuditChainTests {
    static func trail(_ count: Int) -> (lines: [String], head: AuditHead) {
        var head = AuditHead(genesis: String(repeating: "ab", count: 32))
        var lines: [String] = []
        for index in 1...count {
            let event = AuditEvent(
                kind: .read, item: .init(accessGroup: "g", account: "a\(index)", service: "s"), decision: .allow)
            lines.append(head.seal(event, at: Timestamp(seconds: Int64(index))).line)
        }
        return (lines, head)
    }

    @Test func anIntactTrailVerifies() {
        let (lines, head) = Self.trail(5)
        #expect(AuditVerifier.verify(lines: lines, head: head) == .intact(records: 5))
        #expect(AuditVerifier.verify(lines: [], head: AuditHead(genesis: "x")) == .intact(records: 0))
    }

    @Test func aDeletedRecordIsFound() {
        var (lines, head) = Self.trail(5)
        lines.remove(at: 2)
        guard case .broken(3, _) = AuditVerifier.verify(lines: lines, head: head) else {
            Issue.record("deleting record 3 must break at 3")
            return
        }
    }

    @Test func anEditedRecordIsFound() {
        var (lines, head) = Self.trail(5)
        lines[1] = lines[1].replacingOccurrences(of: "\"allow\"", with: "\"deny\"")
        #expect(
            AuditVerifier.verify(lines: lines, head: head)
                == .broken(sequence: 2, reason: "record 2 was changed (record 3 no longer matches it)"))
        // The last record edited is caught by the head.
        var (tail, tailHead) = Self.trail(3)
        tail[2] = tail[2].replacingOccurrences(of: "\"a3\"", with: "\"mallory\"")
        #expect(
            AuditVerifier.verify(lines: tail, head: tailHead)
                == .broken(sequence: 3, reason: "record 3 was changed (it no longer matches the head)"))
        tailHead.genesis = String(repeating: "cd", count: 32)
        guard case .broken(1, _) = AuditVerifier.verify(lines: Self.trail(3).lines, head: tailHead) else {
            Issue.record("a wrong genesis must break at 1")
            return
        }
    }

    @Test func aReorderedTrailIsFound() {
        var (lines, head) = Self.trail(5)
        lines.swapAt(1, 2)
        guard case .broken(2, _) = AuditVerifier.verify(lines: lines, head: head) else {
            Issue.record("swapping records 2 and 3 must break at 2")
            return
        }
    }

    @Test func recordsCutOffTheEndAreFound() {
        let (lines, head) = Self.trail(5)
        #expect(
            AuditVerifier.verify(lines: Array(lines.prefix(3)), head: head)
                == .broken(sequence: 4, reason: "records 4…5 were cut off the end"))
    }

    @Test func garbageIsFound() {
        var (lines, head) = Self.trail(2)
        lines.append("not json")
        guard case .broken(3, _) = AuditVerifier.verify(lines: lines, head: head) else {
            Issue.record("a garbage line must break")
            return
        }
    }

    @Test func redactionReplacesAccountsWithKeyedHMACs() throws {
        let recorder = AuditRecorder()
        let auditor = Auditor(sink: recorder, redactionKey: Array("k".utf8))
        try auditor.record(
            AuditEvent(kind: .read, item: .init(accessGroup: "g", account: "alice", service: "s"), decision: .allow))
        try Auditor(sink: recorder, redactionKey: Array("other".utf8))
            .record(
                AuditEvent(
                    kind: .read, item: .init(accessGroup: "g", account: "alice", service: "s"), decision: .allow))
        let accounts = recorder.records.compactMap { $0.event.item?.account }
        #expect(accounts.allSatisfy { $0.hasPrefix("hmac-sha256:") && !$0.contains("alice") })
        #expect(accounts[0] != accounts[1], "the HMAC is keyed")
        // RFC 4231 test case 2.
        #expect(
            accounts[0].count == "hmac-sha256:".count + 64)
    }
}
