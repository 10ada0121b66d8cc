import Foundation
import KeygatePolicy
import KeygateStore
import Testing

/// The JSON Lines audit trail on disk: chain, head, tamper evidence, crash recovery, concurrency.
@Suite struct AuditTrailFileTests {
    static func event(_ index: Int) -> AuditEvent {
        AuditEvent(
            kind: .read, item: .init(service: "api", account: "user\(index)", accessGroup: "g"), decision: "allow")
    }

    static func write(_ count: Int, to path: String, durability: JSONLinesAuditSink.Durability = .eachRecord) throws {
        let sink = JSONLinesAuditSink(path: path, durability: durability)
        for index in 0..<count { try sink.append(event(index), at: Timestamp(seconds: Int64(index))) }
    }

    func lines(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    func rewrite(_ path: String, _ lines: [String]) throws {
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: false, encoding: .utf8)
    }

    @Test func appendedRecordsVerifyAndArePrivate() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        try Self.write(5, to: path)
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 5))
        #expect(try AuditTrailFile.records(at: path).map(\.sequence) == [1, 2, 3, 4, 5])
        for file in [path, path + ".head"] {
            #expect((try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) == 0o600)
        }
        // Reopening continues the same chain.
        try Self.write(2, to: path)
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 7))
    }

    @Test func deletedEditedReorderedAndCutRecordsAreFound() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        try Self.write(6, to: path)
        let original = try lines(path)

        var deleted = original
        deleted.remove(at: 3)
        try rewrite(path, deleted)
        guard case .broken(4, _) = try AuditTrailFile.verify(at: path) else { Issue.record("deletion of 4"); return }

        var edited = original
        edited[1] = edited[1].replacingOccurrences(of: "user1", with: "mallory")
        try rewrite(path, edited)
        guard case .broken(2, _) = try AuditTrailFile.verify(at: path) else { Issue.record("edit of 2"); return }

        var reordered = original
        reordered.swapAt(2, 3)
        try rewrite(path, reordered)
        guard case .broken(3, _) = try AuditTrailFile.verify(at: path) else { Issue.record("reorder of 3, 4"); return }

        try rewrite(path, Array(original.prefix(4)))
        #expect(try AuditTrailFile.verify(at: path) == .broken(sequence: 5, reason: "records 5…6 were cut off the end"))

        // A tampered trail is not extended: auditing stops with a clear error.
        #expect(throws: KeygateError.self) {
            try JSONLinesAuditSink(path: path).append(Self.event(9), at: Timestamp(seconds: 9))
        }
        try FileManager.default.removeItem(atPath: path + ".head")
        #expect(
            try AuditTrailFile.verify(at: path) == .broken(sequence: 1, reason: "the head file \(path).head is missing"))
    }

    @Test func aCrashBetweenRecordAndHeadIsRecovered() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        try Self.write(2, to: path)
        let staleHead = try String(contentsOfFile: path + ".head", encoding: .utf8)
        try Self.write(1, to: path)
        try staleHead.write(toFile: path + ".head", atomically: false, encoding: .utf8)  // the head write was lost
        try Self.write(1, to: path)
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 4))
    }

    @Test func groupCommitKeepsEveryRecord() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        try Self.write(25, to: path, durability: .groupCommit(records: 10))
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 25))
    }

    @Test func concurrentWritersShareOneChain() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    let sink = JSONLinesAuditSink(path: path)
                    for index in 0..<20 {
                        _ = try? sink.append(Self.event(writer * 100 + index), at: Timestamp(seconds: 1))
                    }
                }
            }
        }
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 80))
    }
}
