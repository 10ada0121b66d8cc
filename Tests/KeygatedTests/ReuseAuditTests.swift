import Foundation
import Glibc
import Testing

/// The audit record of a request served by a proof the daemon remembered (issue 15 points 3
/// and 5): it says the proof was reused (`proofReused: …`, with the factor and the request's
/// window) and is followed by no PAM attempt, so it never reads like a proof the user just
/// gave; a freshly proved read carries no such note.
@Suite struct ReuseAuditTests {
    let a = DaemonFixture.userA
    static let reusedNote =
        "proofReused: the passcode proof of an earlier request, reused within this request's 60 s window"

    static func reasons(_ record: TrailRecord) -> [String] { record.fields["reasons"] as? [String] ?? [] }

    @Test func aReadServedByAReusedProofIsRecordedAsReused() throws {
        let world = try RelayFixture()
        try world.daemon.start()
        try world.addGated(as: a, "gated", "me", "a-value")
        let terminal = try ReuseTerminal(
            uid: a, session: ReuseTests.sessionCounter.next(), directory: world.daemon.directory)
        let prove = ["relay", "answer", "gated", "me", "pass-a", "60"]
        let reread = ["relay", "cancel", "gated", "me", "-", "60"]
        let quiet = ["relay", "fail", "gated", "me", "-", "60"]
        let results = try terminal.run(as: a, socket: world.daemon.socket, [prove, reread, quiet])
        #expect(results[0].lines.last == "a-value", "\(results[0].output)")
        #expect(results[1].lines == ["a-value"], "reused, no prompt: \(results[1].output)")
        #expect(results[2].lines == ["a-value"], "reused, no prompt: \(results[2].output)")

        let records = try AuditTrailTests.records(try world.daemon.probe(as: a, "audit-show", "0"))
        let allowed = records.filter { $0.op == "read" && $0.decision == "allow" }
        try #require(allowed.count == 3, "\(records.map(\.fields))")
        // The fresh read: PAM proved it just before, and nothing says reused.
        let proved = try #require(records.firstIndex { $0.op == "authenticate" && $0.decision == "proved" })
        #expect(records[proved].fields["pamService"] as? String == "keygate")
        #expect(!Self.reasons(allowed[0]).contains { $0.hasPrefix("proofReused:") }, "\(allowed[0].fields)")
        #expect(allowed[0].sequence > records[proved].sequence)
        // The two reused reads say so, and no PAM attempt was recorded for them.
        for record in allowed.dropFirst() {
            #expect(Self.reasons(record).contains(Self.reusedNote), "\(record.fields)")
            #expect((record.fields["factors"] as? [Any])?.isEmpty == false, "\(record.fields)")
        }
        #expect(!records.contains { $0.op == "authenticate" && $0.sequence > allowed[0].sequence })
        #expect(try world.daemon.probe(as: a, "audit-verify").lines == ["verified \(records.count)"])
    }

    /// Every record a request served by a reused proof writes names the reuse (the note comes
    /// with the proof, whatever record lists it), and no record of the request that proved it
    /// through PAM does (its authentication attempt included).
    @Test func everyRecordOfAReusedRequestNamesTheReuseAndNoneOfAFreshOne() throws {
        let world = try RelayFixture()
        try world.daemon.start()
        try world.addGated(as: a, "gated", "me", "a-value")
        let terminal = try ReuseTerminal(
            uid: a, session: ReuseTests.sessionCounter.next(), directory: world.daemon.directory)
        func records() throws -> [TrailRecord] {
            try AuditTrailTests.records(try world.daemon.probe(as: a, "audit-show", "0"))
        }
        var seen = try records().count
        let proved = try terminal.run(
            as: a, socket: world.daemon.socket, [["relay", "answer", "gated", "me", "pass-a", "60"]])
        #expect(proved[0].lines.last == "a-value", "\(proved[0].output)")
        let fresh = Array(try records().dropFirst(seen))
        seen += fresh.count
        #expect(fresh.contains { $0.op == "authenticate" && $0.decision == "proved" }, "\(fresh.map(\.fields))")
        #expect(
            !fresh.contains { Self.reasons($0).contains { $0.hasPrefix("proofReused:") } }, "\(fresh.map(\.fields))")

        let reused = try terminal.run(
            as: a, socket: world.daemon.socket, [["relay", "fail", "gated", "me", "-", "60"]])
        #expect(reused[0].lines == ["a-value"], "\(reused[0].output)")
        let served = Array(try records().dropFirst(seen))
        try #require(!served.isEmpty)
        for record in served {
            #expect(Self.reasons(record).contains(Self.reusedNote), "\(record.fields)")
        }
    }

    /// A request that reuses nothing (no window) is not marked, even right after a reuse on the
    /// same connection's uid: the note belongs to the request that reused.
    @Test func aRequestWithoutAWindowIsNotMarkedReused() throws {
        let world = try RelayFixture()
        try world.daemon.start()
        try world.addGated(as: a, "gated", "me", "a-value")
        let terminal = try ReuseTerminal(
            uid: a, session: ReuseTests.sessionCounter.next(), directory: world.daemon.directory)
        let results = try terminal.run(
            as: a, socket: world.daemon.socket,
            [
                ["relay", "answer", "gated", "me", "pass-a", "60"], ["relay", "cancel", "gated", "me", "-", "60"],
                ["relay", "answer", "gated", "me", "pass-a", "0"],
            ])
        #expect(results.map { $0.lines.last } == ["a-value", "a-value", "a-value"], "\(results.map(\.output))")
        let records = try AuditTrailTests.records(try world.daemon.probe(as: a, "audit-show", "0"))
        let allowed = records.filter { $0.op == "read" && $0.decision == "allow" }
        try #require(allowed.count == 3, "\(records.map(\.fields))")
        #expect(allowed.map { Self.reasons($0).contains { $0.hasPrefix("proofReused:") } } == [false, true, false])
    }
}
