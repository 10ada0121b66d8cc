import Foundation
import KeygateAudit
import KeygatePolicy
import KeygateTesting
import Testing

/// The kit tests itself: every check fails with a message that says what was found.
@Suite struct AuditAssertionTests {
    static func recorder() throws -> AuditRecorder {
        let recorder = AuditRecorder()
        let item = ItemIdentity(accessGroup: "app", account: "me", service: "api")
        try recorder.append(
            AuditEvent(
                kind: .read, item: item, decision: .allow,
                reasons: [.noConstraint]),
            at: Timestamp(seconds: 1))
        try recorder.append(
            AuditEvent(
                kind: .read, item: item, decision: .deny, status: .interactionNotAllowed,
                reasons: [.classUnavailable(.whenUnlocked, .deviceLocked)]),
            at: Timestamp(seconds: 2))
        return recorder
    }

    @Test func lastDecisionMatches() throws {
        let recorder = try Self.recorder()
        #expect(
            recorder.checkLastDecision(
                .read, service: "api", account: "me", is: .deny, status: .interactionNotAllowed,
                because: .classUnavailable)
                == nil)
    }

    @Test func aDenialsStatusCanBeExpectedAsTheEvaluatorWritesIt() throws {
        let recorder = try Self.recorder()
        #expect(
            recorder.checkLastDecision(
                .read, service: "api", account: "me", is: .deny(.interactionNotAllowed), because: .classUnavailable)
                == nil)
        #expect(
            recorder.checkLastDecision(.read, service: "api", account: "me", is: .deny(.itemNotFound))
                == "expected the last read of (api, me) to be deny errSecItemNotFound -25300; it was deny errSecInteractionNotAllowed -25308 (record 2, reasons: [\"classUnavailable: class ak needs an unlocked device; the device is locked\"])"
        )
        #expect(recorder.checkLastDecision(.read, service: "api", account: "me", is: .deny, because: .refused) != nil)
    }

    @Test func lastDecisionMismatchSaysWhatItWas() throws {
        let recorder = try Self.recorder()
        #expect(
            recorder.checkLastDecision(.read, service: "api", account: "me", is: .allow)
                == "expected the last read of (api, me) to be allow; it was deny errSecInteractionNotAllowed -25308 (record 2, reasons: [\"classUnavailable: class ak needs an unlocked device; the device is locked\"])"
        )
        #expect(
            recorder.checkLastDecision(.read, service: "api", account: "me", is: .deny, because: .enrollmentChanged)?
                .hasPrefix("expected the last read of (api, me) to be deny because enrollmentChanged; it was deny")
                == true)
        #expect(
            recorder.checkLastDecision(.read, service: "api", account: "me", is: .deny, status: .itemNotFound) != nil)
        #expect(
            recorder.checkLastDecision(.delete, service: "api", account: "me", is: .allow)
                == "expected the last delete of (api, me) to be allow; no such delete was audited (the trail has 2 records: read)"
        )
    }

    @Test func noAllowedReadCheck() throws {
        let recorder = try Self.recorder()
        #expect(recorder.checkNoAllowedRead(service: "api", account: "me", after: 1) == nil)
        #expect(
            recorder.checkNoAllowedRead(service: "api", account: "me")
                == "expected no allowed read of (api, me) after record 0; record 1 allowed one (reasons: [\"noConstraint: the access control has no constraint (dacl(true))\"])"
        )
    }

    @Test func promptCounts() async {
        let authenticator = ScriptedAuthenticator()
        _ = await authenticator.authenticate(Requirement([.passcode]), prompt: "Read", context: AuthenticationContext())
        #expect(authenticator.checkPrompts(.passcode, count: 1) == nil)
        #expect(
            authenticator.checkPrompts(.passcode, count: 2)
                == "expected exactly 2 passcode prompts; 1 were shown: [\"Read\"]")
        #expect(
            authenticator.checkPrompts(.biometry, count: 1) == "expected exactly 1 biometry prompt; 0 were shown: []")
    }

    @Test func goldenMismatchNamesTheLine() throws {
        let recorder = try Self.recorder()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("golden-\(UUID().uuidString).jsonl")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(recorder.checkGolden(path)?.hasPrefix("no golden file at \(path)") == true)
        try recorder.normalizedTrail.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(recorder.checkGolden(path) == nil)
        try recorder.normalizedTrail.replacingOccurrences(of: "\"deny\"", with: "\"allow\"")
            .write(toFile: path, atomically: true, encoding: .utf8)
        #expect(recorder.checkGolden(path)?.hasPrefix("the trail differs from \(path) at line 2:") == true)
    }

    @Test func theNormalizedTrailHidesTimesAndHashes() throws {
        let trail = try Self.recorder().normalizedTrail
        #expect(trail.contains("\"time\": 0"))
        #expect(trail.contains("\"prev\": \"-\""))
        #expect(trail.split(separator: "\n").count == 2)
    }
}
