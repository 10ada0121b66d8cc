import KeygateAudit
import KeygatePolicy
import Testing

/// Issue 13 point 1: an event's verdict and items are typed values, rendered once into the
/// record's line and parsed back into the same values.
@Suite struct AuditEventTests {
    static func record(_ event: AuditEvent) -> AuditRecord {
        var head = AuditHead(genesis: String(repeating: "ab", count: 32))
        return head.seal(event, at: Timestamp(seconds: 7))
    }

    @Test(arguments: AuditEvent.Verdict.allCases)
    func aRecordParsesBackIntoTheSameEvent(_ verdict: AuditEvent.Verdict) throws {
        var event = AuditEvent(
            kind: .read, item: ItemIdentity(accessGroup: "g", account: "me", service: "api", synchronizable: true),
            accessControl: TestControls.plain, decision: verdict,
            status: verdict == .deny ? .interactionNotAllowed : nil,
            reasons: [
                .classUnavailable(.whenUnlocked, .deviceLocked),
                .factorStale(.passcode, secondsAgo: 12, reuseSeconds: 10),
            ],
            notes: [.refused("no"), .invalidated], processID: 9, userID: 1000)
        event.more = [
            AuditEvent(
                kind: .read, item: ItemIdentity(accessGroup: "g", account: "you", service: "api"), decision: .deny)
        ]
        let record = Self.record(event)
        let parsed = try AuditRecord(line: record.line, file: "trail", lineNumber: 1)
        #expect(parsed.event == record.event)
        #expect(parsed == record)
    }

    @Test func anUnknownVerdictIsRefusedNamingTheField() {
        let line = Self.record(AuditEvent(kind: .read, decision: .allow)).line
            .replacing("\"decision\": \"allow\"", with: "\"decision\": \"maybe\"")
        #expect(throws: InputFileError.self) { try AuditRecord(line: line, file: "trail", lineNumber: 3) }
        do throws(InputFileError) {
            _ = try AuditRecord(line: line, file: "trail", lineNumber: 3)
        } catch {
            #expect(error.line == 3)
            #expect(error.field.contains("decision"))
        }
    }

    /// Names with nothing to escape go into the line whole; any quote, backslash or control
    /// character sends the name through the escaping path. Both parse back to the same bytes.
    @Test(arguments: ["api", "caf\u{E9} \u{7F}", "say \"hi\"", "C:\\dir", "tab\there", "bell\u{7}"])
    func namesAreEscapedOnlyWhereJSONNeedsIt(_ service: String) throws {
        let event = AuditEvent(
            kind: .read, item: ItemIdentity(accessGroup: "g", account: "me", service: service), decision: .allow)
        let record = Self.record(event)
        #expect(record.line.contains("\"service\": \"api\"") == (service == "api"))
        #expect(!record.line.utf8.contains { $0 < 0x20 })
        #expect(record.line.contains("\\u0007") == service.hasPrefix("bell"))
        #expect(record.line.contains("\\t") == service.hasPrefix("tab"))
        #expect(record.line.contains(#"say \"hi\""#) == service.hasPrefix("say"))
        #expect(record.line.contains(#"C:\\dir"#) == service.hasPrefix("C:"))
        #expect(record.line.contains("caf\u{E9} \u{7F}") == service.hasPrefix("caf"))
        let parsed = try AuditRecord(line: record.line, file: "trail", lineNumber: 1)
        #expect(parsed.event.item?.service == service)
        #expect(parsed == record)
    }
}
