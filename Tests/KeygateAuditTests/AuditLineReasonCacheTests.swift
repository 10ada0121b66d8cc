import KeygatePolicy
import Testing

@testable import KeygateAudit

/// Issue 10 point 1: the writer renders each evaluator reason once and reuses its bytes; the
/// line must be exactly what rendering it afresh gives, for every record that repeats it.
@Suite struct AuditLineReasonCacheTests {
    static let reasons: [DecisionReason] = [
        .classAvailable(.whenUnlocked), .noConstraint, .operationNeedsNoAuthentication(.read),
        .factorProved(.passcode, secondsAgo: 3), .factorProved(.passcode, secondsAgo: 4),
        .classUnavailable(.whenUnlocked, .deviceLocked),
    ]

    static func line(_ reasons: [DecisionReason], sequence: UInt64) -> String {
        let event = AuditEvent(
            kind: .read, item: ItemIdentity(accessGroup: "g", account: "a", service: "s"), decision: .allow,
            reasons: reasons, processID: 1, userID: 2)
        return AuditRecord(sequence: sequence, time: Timestamp(seconds: 1), previousHash: "p", event: event).line
    }

    @Test func aRepeatedReasonRendersTheSameBytes() throws {
        let expected =
            "\"reasons\": [" + Self.reasons.map { "\"\($0.description)\"" }.joined(separator: ", ") + "]"
        for sequence in 1...3 {
            let line = Self.line(Self.reasons, sequence: UInt64(sequence))
            #expect(line.contains(expected))
            // Parsed back, the reasons are the same values, in order.
            let parsed = try AuditRecord(line: line, file: "t", lineNumber: 1)
            #expect(parsed.event.reasons == Self.reasons)
        }
        // The same reasons in another order, after all were cached.
        let reversed = Array(Self.reasons.reversed())
        #expect(
            Self.line(reversed, sequence: 9).contains(
                "\"reasons\": [" + reversed.map { "\"\($0.description)\"" }.joined(separator: ", ") + "]"))
    }

    /// More distinct reasons than the cache holds (it starts again empty when full): every
    /// line still renders each reason as its description, the first time and the next.
    @Test func moreReasonsThanTheCacheHoldsRenderTheSame() throws {
        let many: [DecisionReason] = (0..<80).map { .factorProved(.passcode, secondsAgo: Int32($0)) }
        for round in 0..<2 {
            for (index, reason) in many.enumerated() {
                let line = Self.line([reason, .noConstraint], sequence: UInt64(round * 100 + index))
                #expect(line.contains("\"reasons\": [\"\(reason.description)\", \"\(DecisionReason.noConstraint)\"]"))
            }
        }
    }
}
