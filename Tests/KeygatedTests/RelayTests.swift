import Foundation
import Glibc
import Testing

/// PAM runs inside the daemon for the peer's account; its conversation is relayed over the
/// caller's own connection (issue 15 point 3). Statuses are Apple's: a wrong passphrase is
/// errSecAuthFailed (-25293), a cancel errSecUserCanceled (-128), no answer
/// errSecInteractionNotAllowed (-25308).
@Suite struct RelayTests {
    let a = DaemonFixture.userA
    let b = DaemonFixture.userB

    @Test func theRightPassphraseRelayedOverTheSocketReadsTheValue() throws {
        let world = try RelayFixture()
        try world.daemon.start()
        try world.addGated(as: a, "gated", "me", "the-value")
        let read = try world.relay(as: a, "answer", "gated", "me", answer: "pass-a")
        #expect(read.status == 0, "\(read.output)")
        #expect(read.lines.first?.hasPrefix("prompt 1 ") == true, "\(read.output)")
        #expect(read.lines.last == "the-value")
        // The answer went to PAM only: never to the daemon's log.
        #expect(!world.daemon.log.contains("pass-a"), "\(world.daemon.log)")
    }

    /// PAM's info and error messages reach the client as prompt styles 4 and 3, unanswered,
    /// before the prompt that waits for the passphrase.
    @Test func moduleMessagesAreRelayedWithoutWaiting() throws {
        let world = try RelayFixture(chatty: true)
        try world.daemon.start()
        try world.addGated(as: a, "gated", "me", "the-value")
        let read = try world.relay(as: a, "answer", "gated", "me", answer: "pass-a")
        let styles = read.lines.filter { $0.hasPrefix("prompt ") }.map { $0.split(separator: " ")[1] }
        #expect(styles.last == "1", "\(read.output)")
        #expect(styles.dropLast().contains("4") && styles.dropLast().contains("3"), "\(read.output)")
        #expect(styles.dropLast().allSatisfy { $0 == "3" || $0 == "4" }, "\(read.output)")
        #expect(read.lines.last == "the-value", "\(read.output)")
    }

    @Test func anotherUsersPassphraseOrAWrongOneIsErrSecAuthFailed() throws {
        let world = try RelayFixture()
        try world.daemon.start()
        try world.addGated(as: a, "gated", "me", "the-value")
        // B's own (correct) password proves B, never A: PAM runs for the peer uid's account.
        for answer in ["wrong", "pass-b"] {
            let read = try world.relay(as: a, "answer", "gated", "me", answer: answer)
            #expect(read.status == 1)
            #expect(read.lines.last?.hasPrefix("error -25293") == true, "\(read.output)")
            #expect(!read.output.contains("the-value"))
        }
        // Each failed transaction is a log line with PAM's status, never what was typed.
        let failures = world.daemon.log.split(separator: "\n").filter {
            $0.contains("uid \(a) pid ")
                && $0.contains(": authentication: passcode failed: authentication failed (PAM 7)")
        }
        #expect(failures.count == 2, "\(world.daemon.log)")
        #expect(!world.daemon.log.contains("wrong") && !world.daemon.log.contains("pass-b"))
    }

    @Test func aCancelAtThePromptIsErrSecUserCanceled() throws {
        let world = try RelayFixture()
        try world.daemon.start()
        try world.addGated(as: a, "gated", "me", "the-value")
        let read = try world.relay(as: a, "cancel", "gated", "me")
        #expect(read.lines.first?.hasPrefix("prompt 1 ") == true, "\(read.output)")
        #expect(read.lines.last?.hasPrefix("error -128") == true, "\(read.output)")
    }

    /// While a prompt waits, its own thread reads the connection: a frame other than the answer
    /// or a cancel (here a second request) is out of order, so the connection ends with an
    /// error frame (errSecBadReq), the PAM transaction ends, and the next connection is served.
    @Test func anotherRequestWhileAPromptWaitsEndsTheConnectionWithAnErrorFrame() throws {
        let world = try RelayFixture(config: "prompt-timeout = 20\n")
        try world.daemon.start()
        try world.addGated(as: a, "gated", "me", "the-value")
        let started = Date()
        let read = try world.relay(as: a, "intrude", "gated", "me")
        #expect(read.lines.first?.hasPrefix("prompt 1 ") == true, "\(read.output)")
        #expect(read.lines.last?.hasPrefix("error -909 ") == true, "\(read.output)")
        #expect(!read.output.contains("the-value"))
        #expect(Date().timeIntervalSince(started) < 10, "ended at once, not at the prompt timeout")
        #expect(try world.relay(as: a, "answer", "gated", "me", answer: "pass-a").lines.last == "the-value")
        #expect(world.daemon.isRunning)
    }

    @Test func noAnswerWithinThePromptTimeoutIsErrSecInteractionNotAllowed() throws {
        let world = try RelayFixture(config: "prompt-timeout = 1\n")
        try world.daemon.start()
        try world.addGated(as: a, "gated", "me", "the-value")
        let started = Date()
        let read = try world.relay(as: a, "silent", "gated", "me")
        #expect(read.lines.first?.hasPrefix("prompt 1 ") == true, "\(read.output)")
        #expect(read.lines.last?.hasPrefix("error -25308") == true, "\(read.output)")
        #expect(read.lines.last?.hasSuffix("[cause promptTimedOut]") == true, "\(read.output)")
        #expect(Date().timeIntervalSince(started) < 15)
        // The attempt is recorded as what it was (not a cancel by the user), with the same reason.
        let records = try AuditTrailTests.records(try world.daemon.probe(as: a, "audit-show", "0"))
        let attempt = try #require(records.last { $0.op == "authenticate" }, "\(records.map(\.fields))")
        #expect(attempt.decision == "notAllowed", "\(attempt.fields)")
        #expect(attempt.fields["status"] as? Int == -25308, "\(attempt.fields)")
        let reasons = attempt.fields["reasons"] as? [String] ?? []
        #expect(reasons.contains("outcome: not allowed: no answer to the prompt within 1 s"), "\(attempt.fields)")
        // The connection is still usable afterwards: the daemon ended the transaction, not the client.
        #expect(try world.relay(as: a, "answer", "gated", "me", answer: "pass-a").lines.last == "the-value")
    }

    @Test func aClientKilledAtThePromptFreesItsSlotAndOthersAreServedMeanwhile() throws {
        let world = try RelayFixture(config: "max-prompts = 1\n")
        try world.daemon.start()
        try world.addGated(as: a, "gated", "me", "a-value")
        try world.addGated(as: b, "gated", "me", "b-value")
        #expect(try world.daemon.probe(as: b, "add", "plain", "me", "plain-b").lines == ["ok"])
        let hanging = try world.background(as: a, "hang", "gated", "me")
        #expect(hanging.wait(for: "hanging pid="), "\(hanging.output)")
        // While A's prompt waits: B is served, and B's own prompt finds no free slot at once.
        #expect(try world.daemon.probe(as: b, "get", "plain", "me").lines == ["plain-b"])
        let refused = try world.relay(as: b, "answer", "gated", "me", answer: "pass-b")
        #expect(refused.lines.last?.hasPrefix("error -25308") == true, "\(refused.output)")
        #expect(refused.lines.last?.hasSuffix("[cause promptLimit]") == true, "\(refused.output)")
        #expect(!refused.output.contains("prompt 1"))
        let attempts = try AuditTrailTests.records(try world.daemon.probe(as: b, "audit-show", "0"))
            .filter { $0.op == "authenticate" }
        #expect(attempts.last?.decision == "notAllowed", "\(attempts.map(\.fields))")
        kill(hanging.process.processIdentifier, SIGKILL)
        #expect(hanging.finish() != nil)
        // The disconnect ended A's PAM transaction: its slot is free again and B's prompt is served.
        var served = try world.relay(as: b, "answer", "gated", "me", answer: "pass-b")
        let deadline = Date().addingTimeInterval(10)
        while served.lines.last != "b-value" && Date() < deadline {
            usleep(50_000)
            served = try world.relay(as: b, "answer", "gated", "me", answer: "pass-b")
        }
        #expect(served.lines.last == "b-value", "\(served.output)")
        #expect(world.daemon.isRunning)
    }

    @Test func thePerUserPromptLimitLeavesOtherUsersPromptsAlone() throws {
        let world = try RelayFixture(config: "max-prompts-per-user = 1\n")
        try world.daemon.start()
        try world.addGated(as: a, "gated", "me", "a-value")
        try world.addGated(as: b, "gated", "me", "b-value")
        let hanging = try world.background(as: a, "hang", "gated", "me")
        #expect(hanging.wait(for: "hanging pid="), "\(hanging.output)")
        let second = try world.relay(as: a, "answer", "gated", "me", answer: "pass-a")
        #expect(second.lines.last?.hasPrefix("error -25308") == true, "\(second.output)")
        #expect(try world.relay(as: b, "answer", "gated", "me", answer: "pass-b").lines.last == "b-value")
    }
}
