import Foundation
import Glibc
import Testing

/// Biometry through the daemon (issue 15 point 3): a `biometryAny` / `biometryCurrentSet` item
/// is proved by PAM service `keygate-biometry` for the peer's account, relayed like the
/// passcode, with the enrolled set read from the daemon's `enrollment-file`; the statuses are
/// embedded mode's (spec §3, the DocC article "Apple behaviour and our choices").
@Suite struct BiometryRelayTests {
    let a = DaemonFixture.userA

    func expectValue(_ read: DaemonFixture.Result, _ value: String) {
        #expect(read.status == 0, "\(read.output)")
        #expect(read.lines.first?.hasPrefix("prompt 1 ") == true, "\(read.output)")
        #expect(read.lines.last == value, "\(read.output)")
    }

    @Test func biometryItemsAreProvedThroughKeygateBiometry() throws {
        let world = try BiometryFixture()
        try world.enroll(["right-index"])
        try world.daemon.start()
        #expect(try world.add(as: a, "bio", "any", "any-value", "biometryAny").lines == ["ok"])
        #expect(try world.add(as: a, "bio", "current", "current-value", "biometryCurrentSet").lines == ["ok"])
        expectValue(try world.relay.relay(as: a, "answer", "bio", "any", answer: "finger-a"), "any-value")
        expectValue(try world.relay.relay(as: a, "answer", "bio", "current", answer: "finger-a"), "current-value")
        // The passcode's secret is refused: the prompt was keygate-biometry's, not keygate's.
        let passcode = try world.relay.relay(as: a, "answer", "bio", "any", answer: "pass-a")
        #expect(passcode.status == 1)
        #expect(passcode.lines.last?.hasPrefix("error -25293") == true, "\(passcode.output)")
        #expect(!passcode.output.contains("any-value"))
        #expect(!world.daemon.log.contains("finger-a"), "\(world.daemon.log)")
        // The audit trail names the service that proved it.
        let shown = try AuditTrailTests.records(try world.daemon.probe(as: a, "audit-show", "0"))
        let proofs = shown.filter { $0.op == "authenticate" && $0.decision == "proved" }
        #expect(proofs.count == 2)
        #expect(
            proofs.allSatisfy { $0.fields["pamService"] as? String == "keygate-biometry" }, "\(shown.map(\.fields))")
    }

    /// Spec §3 ("What invalidates it" / "What SecItemCopyMatching returns afterwards"), "Apple
    /// behaviour and our choices", "`biometryCurrentSet` after an enrollment change": the item is errSecItemNotFound and
    /// removed, with no prompt; a `biometryAny` item survives the change.
    @Test func anEnrollmentChangeInvalidatesCurrentSetItemsAsInEmbeddedMode() throws {
        let world = try BiometryFixture()
        try world.enroll(["right-index"])
        try world.daemon.start()
        #expect(try world.add(as: a, "bio", "any", "any-value", "biometryAny").lines == ["ok"])
        #expect(try world.add(as: a, "bio", "current", "current-value", "biometryCurrentSet").lines == ["ok"])
        expectValue(try world.relay.relay(as: a, "answer", "bio", "current", answer: "finger-a"), "current-value")
        try world.enroll(["right-index", "left-thumb"])
        let gone = try world.relay.relay(as: a, "answer", "bio", "current", answer: "finger-a")
        #expect(
            gone.lines == [gone.lines.last ?? ""] && gone.lines.last?.hasPrefix("error -25300") == true,
            "\(gone.output)")
        #expect(try world.daemon.probe(as: a, "count").lines == ["1"], "the invalidated item was removed")
        // The caller's trail names the removal and both enrollment sets, as embedded mode's does.
        let shown = try AuditTrailTests.records(try world.daemon.probe(as: a, "audit-show", "0"))
        let removals = shown.filter {
            ($0.fields["reasons"] as? [String] ?? []).contains { $0.hasPrefix("invalidated: ") }
        }
        #expect(removals.count == 1 && removals.first?.account == "current", "\(shown.map(\.fields))")
        let reasons = removals.first?.fields["reasons"] as? [String] ?? []
        #expect(reasons.contains { $0.hasPrefix("enrollment: bound to ") && !$0.contains("none") }, "\(reasons)")
        // Enrolling the old set again brings nothing back.
        try world.enroll(["right-index"])
        let still = try world.relay.relay(as: a, "answer", "bio", "current", answer: "finger-a")
        #expect(still.lines.last?.hasPrefix("error -25300") == true, "\(still.output)")
        try world.enroll(["right-index", "left-thumb"])
        expectValue(try world.relay.relay(as: a, "answer", "bio", "any", answer: "finger-a"), "any-value")
    }

    /// Spec §3 "Add with no biometry enrolled" (→ errSecAuthFailed, the failed bind step), and
    /// keygated(8): a read that needs biometry while none is enrolled is errSecAuthFailed without a
    /// prompt, and no `biometryCurrentSet` item is removed on it.
    @Test func withoutEnrollmentBiometryIsErrSecAuthFailedAndNothingIsRemoved() throws {
        let world = try BiometryFixture()
        try world.daemon.start()
        for flags in ["biometryAny", "biometryCurrentSet"] {
            let refused = try world.add(as: a, "bio", "none-\(flags)", "v", flags)
            #expect(refused.lines.last?.hasPrefix("error -25293") == true, "\(refused.output)")
        }
        let none = try world.daemon.probe(as: a, "count")
        #expect(none.lines.first?.hasPrefix("error -25300") == true, "nothing was added: \(none.output)")
        try world.enroll(["right-index"])
        #expect(try world.add(as: a, "bio", "current", "current-value", "biometryCurrentSet").lines == ["ok"])
        world.unenroll()
        let refused = try world.relay.relay(as: a, "answer", "bio", "current", answer: "finger-a")
        #expect(refused.lines.count == 1, "no prompt: \(refused.output)")
        #expect(refused.lines.last?.hasPrefix("error -25293") == true, "\(refused.output)")
        try "".write(toFile: world.enrollmentFile, atomically: true, encoding: .utf8)
        let empty = try world.relay.relay(as: a, "answer", "bio", "current", answer: "finger-a")
        #expect(empty.lines.last?.hasPrefix("error -25293") == true, "\(empty.output)")
        #expect(try world.daemon.probe(as: a, "count").lines == ["1"], "an unreadable set removes nothing")
        try world.enroll(["right-index"])
        expectValue(try world.relay.relay(as: a, "answer", "bio", "current", answer: "finger-a"), "current-value")
    }
}
