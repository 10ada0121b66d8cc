import Foundation
import Glibc
import Testing

/// A `cancel` that reaches the daemon before any prompt of its request (issue 15 point 3):
/// the request's first prompt ends at once as errSecUserCanceled (-128), with no prompt
/// sent; a request that never prompts is unaffected; a cancel for a request already answered
/// (the protocol accepts it: it may have crossed the reply) changes nothing. The probe answers
/// any prompt that still comes with the right passphrase, so a cancel the daemon dropped
/// shows as the value.
@Suite struct EarlyCancelTests {
    let a = DaemonFixture.userA

    func world() throws -> RelayFixture {
        let world = try RelayFixture(config: "prompt-timeout = 5\n")
        try world.daemon.start()
        try world.addGated(as: a, "gated", "me", "gated-value")
        #expect(try world.daemon.probe(as: a, "add", "plain", "me", "plain-value").lines == ["ok"])
        return world
    }

    @Test func aCancelBeforeAnyPromptEndsTheFirstPromptAtOnce() throws {
        let world = try world()
        let started = Date()
        let early = try world.daemon.probe(as: a, "early", "gated", "me", "pass-a")
        #expect(early.status == 1, "\(early.output)")
        #expect(early.lines.count == 1 && early.lines.last?.hasPrefix("error -128") == true, "\(early.output)")
        #expect(Date().timeIntervalSince(started) < 4, "ended at once, not at the prompt timeout")
        // A cancel is no failure: the next request prompts, and the right answer reads the value.
        #expect(try world.relay(as: a, "answer", "gated", "me", answer: "pass-a").lines.last == "gated-value")
        let records = try AuditTrailTests.records(try world.daemon.probe(as: a, "audit-show", "0"))
        #expect(records.contains { $0.op == "authenticate" && $0.decision == "cancelled" }, "\(records.map(\.fields))")
        #expect(!records.contains { $0.decision == "failed" })
    }

    @Test func aRequestThatNeverPromptsIsUnaffectedByAnEarlyCancel() throws {
        let world = try world()
        let plain = try world.daemon.probe(as: a, "early", "plain", "me", "pass-a")
        #expect(plain.status == 0, "\(plain.output)")
        #expect(plain.lines == ["plain-value"], "\(plain.output)")
    }

    @Test func aCancelForAFinishedRequestChangesNothing() throws {
        let world = try world()
        let late = try world.daemon.probe(as: a, "late", "gated", "me", "pass-a")
        #expect(late.status == 0, "\(late.output)")
        let lines = late.lines
        #expect(lines.count == 4, "\(late.output)")
        #expect(lines.first?.hasPrefix("prompt 1 ") == true && lines.dropFirst(2).first?.hasPrefix("prompt 1 ") == true)
        #expect(lines[1...].filter { $0 == "gated-value" }.count == 2, "\(late.output)")
        #expect(try world.daemon.probe(as: a, "late", "plain", "me", "pass-a").lines == ["plain-value", "plain-value"])
        #expect(world.daemon.isRunning)
    }
}
