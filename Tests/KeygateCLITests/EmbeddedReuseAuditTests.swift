import Foundation
import Keygate
import KeygateTesting
import Testing

/// Embedded mode audits a reused proof as the broker does (issue 15): a `get --reuse-seconds`
/// served by the proof records of an earlier invocation writes records that each name the
/// reuse (`proofReused: …`, factor and window), and the invocation that proved it through PAM
/// writes none that does.
@Suite struct EmbeddedReuseAuditTests {
    static let note =
        "proofReused: the passcode proof of an earlier request, reused within this request's 60 s window"

    static func records(_ world: CLIWorld) throws -> [AuditRecord] {
        let text = try String(contentsOfFile: world.audit, encoding: .utf8)
        return try text.split(separator: "\n").enumerated().map { index, line in
            try AuditRecord(line: String(line), file: world.audit, lineNumber: index + 1)
        }
    }

    @Test func everyRecordOfAReadServedByAnEarlierProofNamesTheReuse() throws {
        let world = try CLIWorld()
        #expect(try world.add("bank", "me", Data("t".utf8), ["--access-control", "devicePasscode"]).status == 0)
        let read = ["--reuse-seconds", "60", "get", "--service", "bank", "--account", "me"]

        var seen = try Self.records(world).count
        #expect(try world.run(read, passphrase: "s3cret").status == 0)
        let fresh = Array(try Self.records(world).dropFirst(seen))
        seen += fresh.count
        #expect(
            fresh.contains { $0.event.kind == .authenticate && $0.event.decision == .proved }, "\(fresh.map(\.line))")
        #expect(!fresh.contains { $0.line.contains("proofReused") }, "\(fresh.map(\.line))")

        let reused = try world.run(read)
        #expect(reused.status == 0, "reused across invocations")
        #expect(reused.stdoutText.hasPrefix("t"), "\(reused.stdoutText)")
        let records = Array(try Self.records(world).dropFirst(seen))
        #expect(records.map(\.event.kind) == [.read], "no authentication: \(records.map(\.line))")
        #expect(records.map(\.event.decision) == [.allow])
        for record in records {
            #expect(record.event.reasonTexts.contains(Self.note), "\(record.line)")
            #expect(record.event.factors.map(\.reusedWithin) == [60])
        }
        #expect(try world.run(["audit", "verify"]).status == 0)
    }
}
