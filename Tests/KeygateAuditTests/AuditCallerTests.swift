import KeygateAudit
import KeygatePolicy
import Testing

/// Issue 15 point 5: a record made for a broker's caller names that caller (uid, pid,
/// executable, logind session) in a field the chain covers and the parser reads back; records
/// without one, and trails written before the field existed, are unchanged.
@Suite struct AuditCallerTests {
    static let genesis = String(repeating: "ab", count: 32)
    static let caller = AuditCaller(
        userID: 61_001, processID: 4_242, executable: "/opt/probe \"v2\"/keygated-probe", session: "c7")

    static func record(_ event: AuditEvent, sequence: UInt64 = 1, previous: String = genesis) -> AuditRecord {
        AuditRecord(sequence: sequence, time: Timestamp(seconds: 7), previousHash: previous, event: event)
    }

    @Test func theCallerIsRenderedBeforePrevAndParsesBack() throws {
        var event = AuditEvent(
            kind: .read, item: ItemIdentity(accessGroup: "g", account: "me", service: "api"), decision: .allow,
            processID: 17, userID: 0, executable: "/usr/sbin/keygated", caller: Self.caller)
        event.more = [
            AuditEvent(
                kind: .read, item: ItemIdentity(accessGroup: "g", account: "you", service: "api"), decision: .deny,
                status: .interactionNotAllowed)
        ]
        let record = Self.record(event)
        #expect(
            record.line.hasSuffix(
                #", "pid": 17, "uid": 0, "exe": "/usr/sbin/keygated", "caller": {"uid": 61001, "pid": 4242, "#
                    + #""exe": "/opt/probe \"v2\"/keygated-probe", "session": "c7"}, "prev": ""# + Self.genesis
                    + #""}"#))
        let parsed = try AuditRecord(line: record.line, file: "trail", lineNumber: 1)
        #expect(parsed == record)
        #expect(parsed.event.caller == Self.caller)
        // The further decisions of the record share its caller.
        #expect(parsed.event.decisions.map(\.caller) == [Self.caller, Self.caller])
    }

    @Test func aCallerWithoutExecutableOrSessionRendersNulls() throws {
        let caller = AuditCaller(userID: 5, processID: 6)
        let record = Self.record(AuditEvent(kind: .add, decision: .allow, caller: caller))
        #expect(record.line.contains(#""caller": {"uid": 5, "pid": 6, "exe": null, "session": null}"#))
        #expect(try AuditRecord(line: record.line, file: "trail", lineNumber: 1).event.caller == caller)
    }

    @Test func theChainCoversTheCaller() {
        var head = AuditHead(genesis: Self.genesis)
        let first = head.seal(AuditEvent(kind: .add, decision: .allow, caller: Self.caller), at: Timestamp(seconds: 1))
        let second = head.seal(
            AuditEvent(kind: .read, decision: .allow, caller: Self.caller), at: Timestamp(seconds: 2))
        #expect(AuditVerifier.verify(lines: [first.line, second.line], head: head) == .intact(records: 2))
        // Claiming another caller (uid 0) for the first record breaks the chain there.
        let forged = first.line.replacing(#""caller": {"uid": 61001"#, with: #""caller": {"uid": 0"#)
        #expect(forged != first.line)
        #expect(
            AuditVerifier.verify(lines: [forged, second.line], head: head)
                == .broken(sequence: 1, reason: "record 1 was changed (record 2 no longer matches it)"))
        // So does removing the caller altogether.
        let stripped = first.line.replacing(
            #", "caller": {"uid": 61001, "pid": 4242, "exe": "/opt/probe \"v2\"/keygated-probe", "session": "c7"}"#,
            with: "")
        #expect(stripped != first.line)
        guard case .broken(sequence: 1, _) = AuditVerifier.verify(lines: [stripped, second.line], head: head) else {
            Issue.record("a record stripped of its caller still verified")
            return
        }
    }

    @Test(arguments: [
        (#"{"uid": -1, "pid": 6}"#, "caller.uid"),
        (#"{"uid": 5, "pid": 99999999999}"#, "caller.pid"),
        (#"{"uid": 5}"#, "caller"),
        (#"{"uid": 5, "pid": 6, "tty": "pts/1"}"#, "caller"),
        (#"{"uid": 5, "pid": 6, "session": 7}"#, "caller.session"),
    ])
    func aBadCallerIsRefusedNamingTheField(caller: String, field: String) {
        let line = Self.record(AuditEvent(kind: .add, decision: .allow, caller: AuditCaller(userID: 5, processID: 6)))
            .line.replacing(#"{"uid": 5, "pid": 6, "exe": null, "session": null}"#, with: caller)
        do throws(InputFileError) {
            _ = try AuditRecord(line: line, file: "trail", lineNumber: 4)
            Issue.record("\(caller) was accepted")
        } catch {
            #expect(error.line == 4)
            #expect(error.field.hasPrefix(field), "\(error)")
        }
    }

    @Test func aFurtherDecisionCannotNameACallerOfItsOwn() {
        var event = AuditEvent(kind: .read, decision: .allow, caller: Self.caller)
        event.more = [AuditEvent(kind: .read, decision: .allow)]
        let line = Self.record(event).line.replacing(
            #""factors": []}]"#, with: #""factors": [], "caller": {"uid": 0, "pid": 1}}]"#)
        #expect(throws: InputFileError.self) { try AuditRecord(line: line, file: "trail", lineNumber: 1) }
    }

    /// A trail written before records could name a caller (no `caller` field anywhere): it
    /// still verifies, parses with no caller, and the writer renders its events to the very
    /// same bytes.
    @Test func aTrailFromBeforeTheCallerFieldStillVerifies() throws {
        let lines = [
            #"{"seq": 1, "time": 7000000000, "op": "add", "item": {"service": "api", "account": "me", "accessGroup": "g"}, "#
                + #""accessControl": null, "rules": [], "decision": "allow", "status": null, "statusName": null, "#
                + #""reasons": [], "factors": [], "pamService": null, "pid": 9, "uid": 1000, "exe": "/usr/bin/keygate", "#
                + #""prev": "abababababababababababababababababababababababababababababababab"}"#,
            #"{"seq": 2, "time": 8000000000, "op": "read", "item": {"service": "api", "account": "me", "accessGroup": "g"}, "#
                + #""accessControl": null, "rules": [], "decision": "deny", "status": -25308, "#
                + #""statusName": "errSecInteractionNotAllowed", "reasons": [], "factors": [], "pamService": null, "#
                + #""pid": 9, "uid": 1000, "exe": "/usr/bin/keygate", "#
                + #""prev": "6aec7e5efc5f430339398f1c0f80d685f5cc134dc67570d99c6da4c4c433ea55"}"#,
        ]
        let head = AuditHead(
            genesis: Self.genesis, sequence: 2, hash: "9b0ca4c5801820b3c075fc21c78647a173b4f486b9980bf8654ab910237f3ba6"
        )
        #expect(AuditVerifier.verify(lines: lines, head: head) == .intact(records: 2))
        for (index, line) in lines.enumerated() {
            let record = try AuditRecord(line: line, file: "old", lineNumber: index + 1)
            #expect(record.event.caller == nil)
            #expect(record.event.executable == "/usr/bin/keygate")
            let again = AuditRecord(
                sequence: record.sequence, time: record.time, previousHash: record.previousHash, event: record.event)
            #expect(again.line == line)
        }
    }

    @Test func theAuditorStampsItsCallerOnEveryRecordAndRedactionLeavesItAlone() async throws {
        let sink = InMemoryAuditSink()
        let key = Array("a key kept outside the trail".utf8)
        let auditor = Auditor(
            sink: sink, redactionKey: key, processID: 17, userID: 0, executable: "/usr/sbin/keygated",
            caller: Self.caller)
        try await auditor.collecting { (auditor) async throws(KeygateError) in
            for account in ["one", "two"] {
                try auditor.record(
                    AuditEvent(
                        kind: .read, item: ItemIdentity(accessGroup: "g", account: account, service: "api"),
                        decision: .allow, processID: 1, userID: 2, caller: AuditCaller(userID: 3, processID: 4)))
            }
        }
        try auditor.record(AuditEvent(kind: .authenticate, decision: .failed))
        let records = sink.records
        #expect(records.count == 2)
        for record in records {
            #expect(record.event.caller == Self.caller)
            #expect(record.event.processID == 17)
            #expect(record.event.executable == "/usr/sbin/keygated")
            let parsed = try AuditRecord(line: record.line, file: "trail", lineNumber: Int(record.sequence))
            #expect(parsed.event.caller == Self.caller)
        }
        let accounts = records[0].event.decisions.compactMap(\.item?.account)
        #expect(accounts.count == 2 && accounts.allSatisfy { $0.hasPrefix("hmac-sha256:") })
        #expect(records[0].event.decisions.allSatisfy { $0.caller == Self.caller })
        // Without a caller (embedded mode) the record has no caller field at all.
        let embedded = InMemoryAuditSink()
        try Auditor(sink: embedded, processID: 1, userID: 2).record(AuditEvent(kind: .add, decision: .allow))
        #expect(embedded.records.first?.event.caller == nil)
        #expect(embedded.records.first?.line.contains("caller") == false)
    }
}
