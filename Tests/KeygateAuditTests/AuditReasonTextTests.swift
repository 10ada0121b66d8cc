import Foundation
import KeygateAudit
import KeygatePolicy
import Testing

/// Issue 13 point 1: the evaluator's reasons and the facade's notes are typed in an event,
/// rendered as text only in the record's line, and read back into the same values.
@Suite struct AuditReasonTextTests {
    static let reasons: [DecisionReason] = [
        .noConstraint, .operationNeedsNoAuthentication(.delete), .operationNeedsNoAuthentication(.add),
        .classAvailable(.whenUnlocked), .classUnavailable(.whenPasscodeSetThisDeviceOnly, .passcodeNotSet),
        .classUnavailable(.whenUnlockedThisDeviceOnly, .notUnlockedSinceBoot), .deprecatedClass(.whenUnlocked),
        .privateKeyUsage, .passcodeRemoved, .enrollmentChanged, .notBound, .boundToEnrollment,
        .factorProved(.biometry, secondsAgo: 0), .factorProved(.passcode, secondsAgo: 2_000_000_000),
        .factorMissing(.companion), .factorStale(.passcode, secondsAgo: 12, reuseSeconds: 10),
        .factorStale(.biometry, secondsAgo: -1, reuseSeconds: 0), .proofForOtherEnrollment,
        .factorUnavailable(.biometry, .biometryNotEnrolled), .factorUnavailable(.companion, .companionNotAvailable),
        .thresholdMet(satisfied: 2, required: 3), .thresholdUnreachable(possible: 0, required: 1),
        .interactionNotAllowed(.fail), .interactionNotAllowed(.skip), .skipOutsideRead(.update),
        .contextInvalidated, .internalFailure,
    ]

    static let notes: [AuditNote] = [
        .refused("the caller may not use access group 'x'"),
        .enrollment(bound: EnrollmentSetHash(templateIDs: ["a"]), now: nil), .enrollment(bound: nil, now: nil),
        .invalidated, .storeFailure("add of api/me@g: duplicate"), .requirement(Requirement([.passcode])),
        .requirement(Requirement([FactorSet(.biometry), FactorSet([FactorSet(.passcode), FactorSet(.companion)])])),
        .outcome(.proved(FactorSet(.passcode))), .outcome(.failed(.passcode, message: "wrong: try again")),
        .outcome(.cancelled), .outcome(.unavailable("no PAM service")),
        .lockedOut(.passcode, .lockedOut(.passcode, until: nil)),
        .lockedOut(.biometry, .lockedOut(.biometry, until: Timestamp(seconds: 1_800_000_000))),
        .organisationRule(PolicyReason(ruleID: "fresh-reads", action: .read, effect: .freshWithin(seconds: 30))),
        .organisationRule(PolicyReason(ruleID: "no-export", action: .export, effect: .forbids)),
        .organisationRule(PolicyReason(ruleID: "strong", action: .add, effect: .minimumMet("devicePasscode"))),
        .organisationRule(
            PolicyReason(
                ruleID: "strong", action: .update, effect: .minimumNotMet("devicePasscode", item: "userPresence"))),
        .organisationRule(
            PolicyReason(ruleID: "strong", action: .add, effect: .minimumNotMet("devicePasscode", item: nil))),
        .organisationRule(
            PolicyReason(ruleID: "strong", action: .read, effect: .minimumForItemsWritten("devicePasscode"))),
        .organisationRule(
            PolicyReason(
                ruleID: "two", action: .delete,
                effect: .alsoRequires(Requirement([FactorSet([FactorSet(.passcode), FactorSet(.biometry)])])))),
        .needs(Requirement([.passcode])),
        .organisationGrant("no grant names /usr/bin/x"), .attributesOnly, .askedAgent("pid 42 /usr/bin/keygate"),
        .policyKept(rules: 3, message: "b.policy:2:38: bad"),
        .policyLoaded(rules: 2, grants: 1, paths: ["/etc/keygate/a.policy", "/b"]),
        .anchorRestarted("the anchor reached record 3"), .headRecovered(from: 2, to: 5), .tornTailCut(bytes: 30),
        .restoredFromStore(records: 3),
        .proofReused(.passcode, window: 60), .proofReused(.biometry, window: 300),
        .unrecognised("someFutureNote: from a newer version"),
    ]

    static let alicesRule = PolicyReason(ruleID: "alice's rule", action: .read, effect: .forbids)

    @Test(arguments: reasons)
    func everyReasonReadsBackFromItsText(_ reason: DecisionReason) {
        #expect(DecisionReason(description: reason.description) == reason)
    }

    @Test(arguments: notes)
    func everyNoteReadsBackFromItsText(_ note: AuditNote) {
        #expect(AuditNote(text: note.description, kind: .read) == note)
    }

    @Test func aTamperRecordsTextIsTheDamage() {
        #expect(
            AuditNote(text: "the row's seal does not verify", kind: .tamper)
                == .tampered("the row's seal does not verify"))
        #expect(
            AuditNote(text: "the row's seal does not verify", kind: .read)
                == .unrecognised("the row's seal does not verify"))
    }

    @Test func aTextNoReasonRendersToIsNeitherGuessedNorRefused() throws {
        // A reason code with an explanation this version never writes, and a text of another version.
        #expect(DecisionReason(description: "classAvailable: protection class zz is available") == nil)
        #expect(DecisionReason(description: "thresholdMet: 300 of 2 required constraints satisfied") == nil)
        #expect(AuditNote(text: "outcome: something else", kind: .read) == .unrecognised("outcome: something else"))
        let record = AuditEventTests.record(
            AuditEvent(
                kind: .read, decision: .allow, reasons: [.noConstraint],
                notes: [.unrecognised("classAvailable: protection class zz is available")]))
        let parsed = try AuditRecord(line: record.line, file: "trail", lineNumber: 1)
        #expect(parsed.event.reasons == [.noConstraint])
        #expect(parsed.event.notes == [.unrecognised("classAvailable: protection class zz is available")])
        #expect(parsed == record)
    }

    @Test func everyReasonAndNoteSurvivesARecord() throws {
        let event = AuditEvent(kind: .delete, decision: .allow, reasons: Self.reasons, notes: Self.notes)
        let record = AuditEventTests.record(event)
        let parsed = try AuditRecord(line: record.line, file: "trail", lineNumber: 1)
        #expect(parsed.event.reasons == Self.reasons)
        #expect(parsed.event.notes == Self.notes)
    }

    /// Issue 13 point 1: redaction works on the fields marked sensitive (the account, a note
    /// that names the item), never on the evaluator's reasons.
    @Test func redactionReplacesTheAccountInTheFieldsThatMayNameIt() throws {
        let item = ItemIdentity(accessGroup: "g", account: "alice", service: "api")
        let event = AuditEvent(
            kind: .read, item: item, decision: .deny, status: .decode, reasons: [.classAvailable(.whenUnlocked)],
            notes: [.storeFailure("read of api/alice@g: damaged"), .organisationRule(Self.alicesRule)])
        let redacted = event.redacted(under: Array("k".utf8))
        let hmac = try #require(redacted.item?.account)
        #expect(hmac.hasPrefix("hmac-sha256:"))
        #expect(
            redacted.notes == [.storeFailure("read of api/\(hmac)@g: damaged"), .organisationRule(Self.alicesRule)])
        #expect(redacted.reasons == event.reasons)
        #expect(!AuditEventTests.record(redacted).line.contains("api/alice"))
    }
}

/// Issue 13 point 1: one JSON shape for a decision. A decision's JSON form (`keygate
/// evaluate`'s report, `Decision`'s `Codable`) spells `decision`, `status`, `statusName` and
/// `reasons` exactly as an audit record's line does.
@Suite struct DecisionShapeTests {
    @Test func aDecisionsJSONFormHasTheAuditLinesDecisionFields() throws {
        let evaluator = Evaluator()
        var state = AuthenticationState()
        state.device = DeviceState(isLocked: true)
        state.interaction = .fail
        let controls = [
            try AccessControl(protection: .whenUnlocked, flags: []),
            try AccessControl(protection: .afterFirstUnlock, flags: .userPresence),
        ]
        for control in controls {
            let decision = evaluator.evaluate(control, operation: .read, state: state, now: Timestamp(seconds: 9))
            let line = AuditEventTests.record(
                AuditEvent(.read, item: nil, accessControl: control, decision: decision, factors: [])
            ).line
            let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(decision)) as? [String: Any]
            let record = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            for key in ["decision", "status", "statusName", "reasons"] {
                #expect(
                    "\(json?[key] ?? "absent")" == "\(record?[key] ?? "absent")", "\(key) of \(decision)")
            }
            #expect(try JSONDecoder().decode(Decision.self, from: JSONEncoder().encode(decision)) == decision)
        }
    }

    @Test func aReasonTextNoReasonRendersToIsRefusedNamingTheField() {
        let text = #"{"decision": "allow", "status": null, "reasons": ["noConstraint: something else"]}"#
        #expect {
            try JSONDecoder().decode(Decision.self, from: Data(text.utf8))
        } throws: { error in
            "\(error)".contains("reasons") && "\(error)".contains("noConstraint: something else")
        }
    }
}
