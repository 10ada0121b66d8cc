public import KeygateAudit
public import KeygatePolicy

/// The in-memory audit sink for tests, with questions and assertions about the trail.
///
/// Every `check…` method returns nil when the trail matches and a message saying what was
/// found otherwise; the `expect…` methods report that message as a test failure, in Swift
/// Testing or XCTest, whichever is running.
///
/// ```swift
/// let audit = AuditRecorder()
/// let keychain = Keychain(store: InMemoryItemStore(), accessGroups: ["app"], authenticator: auth,
///                         device: device, auditor: Auditor(sink: audit))
/// device.lock()
/// _ = try? await keychain.copyMatching(ItemQuery(service: "api", account: "me", returnData: true))
/// audit.expectLastDecision(.read, service: "api", account: "me", is: .deny(.interactionNotAllowed),
///                          because: .classUnavailable)
/// ```
public final class AuditRecorder: AuditSink {
    private let sink = InMemoryAuditSink()

    /// An empty recorder.
    public init() {}

    /// Seals and keeps the record.
    @discardableResult
    public func append(_ event: AuditEvent, at time: Timestamp) throws(KeygateError) -> AuditRecord {
        try sink.append(event, at: time)
    }

    /// Every record, in order.
    public var records: [AuditRecord] { sink.records }

    /// The records about one item, optionally of one kind, in order; `accessGroup` nil matches
    /// the item in any group. A record that names several items (one call's decisions) is
    /// given as the decision about this one (``KeygateAudit/AuditRecord/init(_:decision:)``).
    public func records(
        _ kind: AuditEvent.Kind? = nil, service: String, account: String, accessGroup: String? = nil
    ) -> [AuditRecord] {
        records.flatMap { record in
            record.event.decisions.filter { event in
                event.item?.service == service && event.item?.account == account
                    && (accessGroup.map { $0 == event.item?.accessGroup } ?? true)
                    && (kind.map { $0 == event.kind } ?? true)
            }.map { AuditRecord(record, decision: $0) }
        }
    }

    /// The records about exactly `item` (service, account and access group), optionally of one kind.
    public func records(_ kind: AuditEvent.Kind? = nil, item: ItemIdentity) -> [AuditRecord] {
        records(kind, service: item.service, account: item.account, accessGroup: item.accessGroup)
    }

    /// Checks the last decision of `kind` about (service, account): its decision (`allow`,
    /// `.deny(.interactionNotAllowed)`, `authenticate`), status, and an evaluator's reason it
    /// must give, as a typed value (`because: .classUnavailable`).
    public func checkLastDecision(
        _ kind: AuditEvent.Kind, service: String, account: String, accessGroup: String? = nil,
        is decision: ExpectedVerdict, status: KeygateStatus? = nil, because reason: DecisionReason.Code? = nil
    ) -> String? {
        check(
            kind, service: service, account: account, accessGroup: accessGroup, is: decision, status: status,
            because: reason?.rawValue
        ) { event in reason.map { event.gives($0) } ?? true }
    }

    /// Checks the last decision of `kind` about (service, account), as the form with an
    /// evaluator's reason does, with a note of the facade it must carry (`because: .refused`,
    /// `because: .invalidated`).
    public func checkLastDecision(
        _ kind: AuditEvent.Kind, service: String, account: String, accessGroup: String? = nil,
        is decision: ExpectedVerdict, status: KeygateStatus? = nil, because note: AuditNote.Code
    ) -> String? {
        check(
            kind, service: service, account: account, accessGroup: accessGroup, is: decision, status: status,
            because: note.rawValue
        ) { event in event.gives(note) }
    }

    private func check(
        _ kind: AuditEvent.Kind, service: String, account: String, accessGroup: String?, is decision: ExpectedVerdict,
        status: KeygateStatus?, because reason: String?, gives: (AuditEvent) -> Bool
    ) -> String? {
        let what = "the last \(kind.rawValue) of (\(service), \(account)\(accessGroup.map { ", \($0)" } ?? ""))"
        let status = status ?? decision.status
        let expected =
            "\(decision.verdict)" + (status.map { " \($0)" } ?? "") + (reason.map { " because \($0)" } ?? "")
        guard let last = records(kind, service: service, account: account, accessGroup: accessGroup).last else {
            let kinds = Set(records.map(\.event.kind.rawValue)).sorted().joined(separator: ", ")
            return
                "expected \(what) to be \(expected); no such \(kind.rawValue) was audited (the trail has \(records.count) records: \(kinds))"
        }
        let found = "\(last.event.decision)" + (last.event.status.map { " \($0)" } ?? "")
        let statusMatches = status == nil || last.event.status == status
        guard last.event.decision == decision.verdict, statusMatches, gives(last.event) else {
            return
                "expected \(what) to be \(expected); it was \(found) (record \(last.sequence), reasons: \(last.event.reasonTexts))"
        }
        return nil
    }

    /// Checks that no record after `sequence` allowed the value of (service, account) to be
    /// decrypted: a read, an update or an export.
    public func checkNoAllowedRead(
        service: String, account: String, accessGroup: String? = nil, after sequence: UInt64 = 0
    ) -> String? {
        let decrypting: Set<AuditEvent.Kind> = [.read, .update, .export]
        let allowed = records(service: service, account: account, accessGroup: accessGroup).filter {
            $0.sequence > sequence && decrypting.contains($0.event.kind) && $0.event.decision == .allow
                && !$0.event.gives(AuditNote.Code.attributesOnly)
        }
        guard let first = allowed.first else { return nil }
        return
            "expected no allowed read of (\(service), \(account)) after record \(sequence); record \(first.sequence) allowed one (reasons: \(first.event.reasonTexts))"
    }

    /// The sequence number of the last record so far (0 when empty), to mark a point in time.
    public var lastSequence: UInt64 { records.last?.sequence ?? 0 }

    /// The trail as JSON Lines with times, process ids, user ids and hashes replaced by fixed
    /// values, so it can be compared with a golden file.
    public var normalizedTrail: String {
        records.map { record in
            var event = record.event
            event.processID = 0
            event.userID = 0
            return AuditRecord(
                sequence: record.sequence, time: Timestamp(nanoseconds: 0), previousHash: "-", event: event
            ).line
        }.joined(separator: "\n") + (records.isEmpty ? "" : "\n")
    }

    /// Compares ``normalizedTrail`` with the golden file at `path`; with the environment
    /// variable `KEYGATE_UPDATE_GOLDEN=1` it writes the file instead.
    public func checkGolden(_ path: String) -> String? {
        Golden.check(normalizedTrail, against: path)
    }
}

extension AuditRecorder {
    /// Reports a failure unless the last decision of `kind` about (service, account) is
    /// `decision`, with `status`, because of the evaluator's reason `reason`.
    public func expectLastDecision(
        _ kind: AuditEvent.Kind, service: String, account: String, accessGroup: String? = nil,
        is decision: ExpectedVerdict, status: KeygateStatus? = nil, because reason: DecisionReason.Code? = nil,
        filePath: StaticString = #filePath, line: UInt = #line
    ) {
        TestFailure.report(
            checkLastDecision(
                kind, service: service, account: account, accessGroup: accessGroup, is: decision, status: status,
                because: reason),
            filePath: filePath, line: line)
    }

    /// Reports a failure unless the last decision of `kind` about (service, account) is
    /// `decision`, with `status`, carrying the facade's note `note`.
    public func expectLastDecision(
        _ kind: AuditEvent.Kind, service: String, account: String, accessGroup: String? = nil,
        is decision: ExpectedVerdict, status: KeygateStatus? = nil, because note: AuditNote.Code,
        filePath: StaticString = #filePath, line: UInt = #line
    ) {
        TestFailure.report(
            checkLastDecision(
                kind, service: service, account: account, accessGroup: accessGroup, is: decision, status: status,
                because: note),
            filePath: filePath, line: line)
    }

    /// Reports a failure unless ``checkNoAllowedRead(service:account:accessGroup:after:)`` passes.
    public func expectNoAllowedRead(
        service: String, account: String, accessGroup: String? = nil, after sequence: UInt64 = 0,
        filePath: StaticString = #filePath, line: UInt = #line
    ) {
        TestFailure.report(
            checkNoAllowedRead(service: service, account: account, accessGroup: accessGroup, after: sequence),
            filePath: filePath, line: line)
    }

    /// Reports a failure unless the trail matches the golden file.
    public func expectGolden(_ path: String, filePath: StaticString = #filePath, line: UInt = #line) {
        TestFailure.report(checkGolden(path), filePath: filePath, line: line)
    }
}

extension ScriptedAuthenticator {
    /// Checks that exactly `count` prompts for `factor` were shown.
    public func checkPrompts(_ factor: Factor, count: Int) -> String? {
        let shown = prompts(for: factor)
        guard shown.count != count else { return nil }
        return
            "expected exactly \(count) \(factor) prompt\(count == 1 ? "" : "s"); \(shown.count) were shown: \(shown.map(\.text))"
    }

    /// Reports a failure unless exactly `count` prompts for `factor` were shown.
    public func expectPrompts(_ factor: Factor, count: Int, filePath: StaticString = #filePath, line: UInt = #line) {
        TestFailure.report(checkPrompts(factor, count: count), filePath: filePath, line: line)
    }
}
