import KeygateAudit
import KeygatePolicy
import Testing

/// The verifier's answers for crashes, anchors and oversized lines (issue 9 points 4, 5, 9).
@Suite struct AuditVerifierTests {
    static let genesis = String(repeating: "cd", count: 32)

    /// A trail of `count` records and the head after each one (index 0: the empty trail's).
    static func trail(_ count: Int, note: AuditNote? = nil) -> (lines: [String], heads: [AuditHead]) {
        var head = AuditHead(genesis: genesis)
        var heads = [head]
        var lines: [String] = []
        for index in 1...count {
            let event = AuditEvent(
                kind: .read, item: .init(accessGroup: "g", account: "a\(index)", service: "s"), decision: .allow,
                notes: note.map { [$0] } ?? [])
            lines.append(head.seal(event, at: Timestamp(seconds: Int64(index))).line)
            heads.append(head)
        }
        return (lines, heads)
    }

    @Test func recordsPastTheHeadThatChainAreACrashNotTampering() {
        let (lines, heads) = Self.trail(5)
        #expect(AuditVerifier.verify(lines: lines, head: heads[3]) == .headBehind(records: 5, head: 3))
        #expect(AuditVerifier.verify(lines: lines, head: heads[0]) == .headBehind(records: 5, head: 0))
        #expect(AuditVerifier.verify(lines: lines, head: heads[5]) == .intact(records: 5))
    }

    @Test func aHeadThatMatchesNoRecordIsTampering() {
        let (lines, heads) = Self.trail(5)
        var forged = heads[3]
        forged.hash = String(repeating: "0", count: 64)
        guard case .broken(3, _) = AuditVerifier.verify(lines: lines, head: forged) else {
            Issue.record("an edited head must be tampering")
            return
        }
    }
}

extension AuditVerifierTests {
    @Test func aTrailThatReachesItsAnchorVerifies() {
        let (lines, heads) = Self.trail(5)
        #expect(AuditVerifier.verify(lines: lines, head: heads[5], anchor: heads[5]) == .intact(records: 5))
        #expect(AuditVerifier.verify(lines: lines, head: heads[5], anchor: heads[2]) == .intact(records: 5))
    }

    @Test func aTrailThatDoesNotReachItsAnchorIsBroken() {
        let (lines, heads) = Self.trail(5)
        // Cut back to 3 records together with the head.
        guard case .broken(4, _) = AuditVerifier.verify(lines: Array(lines.prefix(3)), head: heads[3], anchor: heads[5])
        else {
            Issue.record("records cut with the head must be found")
            return
        }
        // Gone entirely.
        guard case .broken(1, _) = AuditVerifier.verify(lines: [], head: nil, anchor: heads[5]) else {
            Issue.record("a vanished trail must be found")
            return
        }
        // Another record at the anchor's place (same genesis).
        var other = heads[3]
        other.hash = String(repeating: "1", count: 64)
        guard case .broken(3, _) = AuditVerifier.verify(lines: lines, head: heads[5], anchor: other) else {
            Issue.record("a record that differs from the anchor must be found")
            return
        }
    }
}

extension AuditVerifierTests {
    /// Issue 9 point 9: a line longer than 64 KiB is reported with its line number, even when it chains.
    @Test func anOversizedLineIsReportedWithItsNumber() {
        var head = AuditHead(genesis: Self.genesis)
        var lines: [String] = []
        for index in 1...3 {
            let event = AuditEvent(
                kind: .read, decision: .allow,
                notes: index == 2 ? [.unrecognised(String(repeating: "y", count: 70_000))] : [])
            lines.append(head.seal(event, at: Timestamp(seconds: Int64(index))).line)
        }
        guard case .broken(2, let reason) = AuditVerifier.verify(lines: lines, head: head) else {
            Issue.record("a line over 64 KiB must be refused")
            return
        }
        #expect(reason.hasPrefix("line 2 is "))
        #expect(reason.contains("longer than the 65536"))
        #expect(throws: InputFileError.self) { try AuditRecord(line: lines[1], file: "t", lineNumber: 2) }
    }
}
