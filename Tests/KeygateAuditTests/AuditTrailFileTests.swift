import Foundation
import KeygatePolicy
import KeygateStore
import KeygateTesting
import Synchronization
import Testing

@testable import KeygateAudit

/// The JSON Lines audit trail on disk: chain, head, tamper evidence, crash recovery, concurrency.
@Suite struct AuditTrailFileTests {
    static func event(_ index: Int) -> AuditEvent {
        AuditEvent(
            kind: .read, item: .init(accessGroup: "g", account: "user\(index)", service: "api"), decision: .allow)
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
            try AuditTrailFile.verify(at: path) == .broken(sequence: 1, reason: "the head file \(path).head is missing")
        )
    }

    @Test func aCrashBetweenRecordAndHeadIsRecovered() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        try Self.write(2, to: path)
        let staleHead = try String(contentsOfFile: path + ".head", encoding: .utf8)
        try Self.write(1, to: path)
        try staleHead.write(toFile: path + ".head", atomically: false, encoding: .utf8)  // the head write was lost
        #expect(try AuditTrailFile.verify(at: path) == .headBehind(records: 3, head: 2), "a crash is not tampering")
        try Self.write(1, to: path)
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 5))
        #expect(try AuditTrailFile.records(at: path).map(\.event.kind) == [.read, .read, .read, .recover, .read])
    }

    /// Makes every head write of the trail at `path` fail (a full disk, EIO) while `body` runs.
    /// (The head is written in place, so there is no temporary file to get in its way: the
    /// sink's fault switch stands in for the failure.)
    func withFailingHeadWrites(_ path: String, _ body: () throws -> Void) throws {
        JSONLinesAuditSink.failingHeadWrites.withLock { _ = $0.insert(path) }
        defer { JSONLinesAuditSink.failingHeadWrites.withLock { _ = $0.remove(path) } }
        try body()
    }

    /// Issue 9 point 4: two failed head writes (a full disk, EIO, two crashes) left records
    /// past the head, and every later append and `verify` reported tampering for good. Records
    /// that chain from the head are taken over by the next append, with a recovery record.
    @Test func twoFailedHeadWritesAreRecoveredByTheNextAppend() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        try Self.write(2, to: path)
        try withFailingHeadWrites(path) {
            for index in 0..<2 {
                #expect(throws: KeygateError.self) {
                    try JSONLinesAuditSink(path: path).append(Self.event(10 + index), at: Timestamp(seconds: 10))
                }
            }
        }
        // Both records reached the trail (the second after a recovery record), the head did not.
        #expect(try lines(path).count == 5)
        #expect(try AuditTrailFile.verify(at: path) == .headBehind(records: 5, head: 2))
        let record = try JSONLinesAuditSink(path: path).append(Self.event(20), at: Timestamp(seconds: 20))
        #expect(record.sequence == 7)
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 7))
        let recovery = try AuditTrailFile.records(at: path)[5]
        #expect(recovery.event.kind == .recover)
        #expect(recovery.event.notes.first == .headRecovered(from: 2, to: 5))
    }

    @Test func repairBringsTheHeadForwardAndSaysWhatItDid() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        try Self.write(1, to: path)
        try withFailingHeadWrites(path) {
            for _ in 0..<2 { _ = try? JSONLinesAuditSink(path: path).append(Self.event(5), at: Timestamp(seconds: 5)) }
        }
        let sink = JSONLinesAuditSink(path: path)
        let repair = try sink.repair(at: Timestamp(seconds: 6))
        #expect(repair == AuditRepair(staleHead: 1, recovered: 3, record: 5), "\(String(describing: repair))")
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 5))
        #expect(try sink.repair(at: Timestamp(seconds: 7)) == nil, "nothing left to repair")
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 5))
    }

    /// Records past the head that do not chain from it, or a head that matches no record,
    /// are still tampering: never taken over.
    @Test func recordsThatDoNotChainFromTheHeadAreStillTampering() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        try Self.write(2, to: path)
        try withFailingHeadWrites(path) {
            for _ in 0..<2 { _ = try? JSONLinesAuditSink(path: path).append(Self.event(5), at: Timestamp(seconds: 5)) }
        }
        let original = try lines(path)
        var edited = original
        edited[2] = edited[2].replacingOccurrences(of: "user5", with: "mallory")
        try rewrite(path, edited)
        guard case .broken(3, _) = try AuditTrailFile.verify(at: path) else {
            Issue.record("an edited record past the head is tampering")
            return
        }
        #expect(throws: KeygateError.self) { try JSONLinesAuditSink(path: path).repair(at: Timestamp(seconds: 6)) }
        #expect(throws: KeygateError.self) {
            try JSONLinesAuditSink(path: path).append(Self.event(6), at: Timestamp(seconds: 6))
        }
        // An edited head: its hash matches no record.
        try rewrite(path, original)
        let head = try String(contentsOfFile: path + ".head", encoding: .utf8)
        let forged = head.replacingOccurrences(of: "\"hash\": \"", with: "\"hash\": \"00")
        try forged.write(toFile: path + ".head", atomically: false, encoding: .utf8)
        guard case .broken(2, _) = try AuditTrailFile.verify(at: path) else {
            Issue.record("an edited head is tampering")
            return
        }
        #expect(throws: KeygateError.self) { try JSONLinesAuditSink(path: path).repair(at: Timestamp(seconds: 6)) }
    }

    /// Appends the first `count` bytes of a record line, without its newline: a crash mid-write.
    func tear(_ path: String, bytes count: Int) throws {
        var head = AuditHead(genesis: "ff")
        let line = head.seal(Self.event(99), at: Timestamp(seconds: 99)).line
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(line.utf8.prefix(count)))
        try handle.close()
    }

    /// A crash during a write leaves a partial line past the head: not tampering; the next
    /// append cuts it off and says so.
    @Test func aPartialLastRecordIsACrashAndIsCutOff() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        try Self.write(2, to: path)
        try tear(path, bytes: 30)
        #expect(try AuditTrailFile.verify(at: path) == .tornTail(records: 2, head: 2, bytes: 30))
        try Self.write(1, to: path)
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 4))
        let recovery = try AuditTrailFile.records(at: path)[2]
        #expect(recovery.event.kind == .recover)
        #expect(recovery.event.notes == [.tornTailCut(bytes: 30)])
        #expect(
            recovery.line.contains(
                "tornTailCut: a partial record of 30 bytes past the head (a crash during a write) was cut off"))
    }

    @Test func repairCutsAPartialRecordAndMovesTheHead() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        try Self.write(2, to: path)
        try withFailingHeadWrites(path) {
            _ = try? JSONLinesAuditSink(path: path).append(Self.event(3), at: Timestamp(seconds: 3))
        }
        try tear(path, bytes: 12)
        #expect(try AuditTrailFile.verify(at: path) == .tornTail(records: 3, head: 2, bytes: 12))
        let repair = try JSONLinesAuditSink(path: path).repair(at: Timestamp(seconds: 4))
        #expect(repair == AuditRepair(staleHead: 2, recovered: 1, record: 4, tornBytes: 12))
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 4))
    }

    /// A record in the head cut short is not a crash: tampering.
    @Test func aRecordInTheHeadCutShortIsTampering() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        try Self.write(3, to: path)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        try String(text.dropLast(20)).write(toFile: path, atomically: false, encoding: .utf8)
        guard case .broken(3, _) = try AuditTrailFile.verify(at: path) else {
            Issue.record("a cut record in the head is tampering")
            return
        }
        #expect(throws: KeygateError.self) {
            try JSONLinesAuditSink(path: path).append(Self.event(4), at: Timestamp(seconds: 4))
        }
        // Only the final newline removed: not extended either (it would glue two records).
        try String(text.dropLast()).write(toFile: path, atomically: false, encoding: .utf8)
        #expect(throws: KeygateError.self) {
            try JSONLinesAuditSink(path: path).append(Self.event(4), at: Timestamp(seconds: 4))
        }
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

    /// Group commit between flushes takes the trail's length from the open file (no path lookup):
    /// two sinks taking turns on one trail still see each other's records and keep one chain.
    @Test func groupCommitWritersTakingTurnsShareOneChain() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let sinks = (0..<2).map { _ in JSONLinesAuditSink(path: path, durability: .groupCommit(records: 8)) }
        for index in 0..<40 { try sinks[index % 2].append(Self.event(index), at: Timestamp(seconds: 1)) }
        for sink in sinks { sink.flush() }
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 40))
    }

    /// Under group commit the paths are looked up again on the first append after each flush: a
    /// trail moved away behind the sink's back gets the records up to that flush (N of them
    /// here), and the next append finds the path empty while the head names records, and fails
    /// (errSecIO) instead of starting a new trail.
    @Test func groupCommitNoticesAMovedTrailAtTheNextFlush() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let sink = JSONLinesAuditSink(path: path, durability: .groupCommit(records: 3))
        try sink.append(Self.event(0), at: Timestamp(seconds: 1))
        #expect(rename(path, path + ".moved") == 0)
        try sink.append(Self.event(1), at: Timestamp(seconds: 1))
        try sink.append(Self.event(2), at: Timestamp(seconds: 1))
        let error = #expect(throws: KeygateError.self) { try sink.append(Self.event(3), at: Timestamp(seconds: 1)) }
        #expect(error?.status == .io)
        #expect(try lines(path + ".moved").count == 3)
        #expect(try lines(path).isEmpty)
    }

    /// Between group-commit flushes only the trail's length is read (no path lookup, no stat):
    /// a trail made readable by others is refused at the first append after the next flush.
    @Test func groupCommitRefusesATrailMadePublicAtTheNextFlush() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let sink = JSONLinesAuditSink(path: path, durability: .groupCommit(records: 3))
        try sink.append(Self.event(0), at: Timestamp(seconds: 1))
        try sink.append(Self.event(1), at: Timestamp(seconds: 1))
        #expect(chmod(path, 0o644) == 0)
        try sink.append(Self.event(2), at: Timestamp(seconds: 1))
        let error = #expect(throws: KeygateError.self) { try sink.append(Self.event(3), at: Timestamp(seconds: 1)) }
        #expect(error?.status == .io)
        #expect(try lines(path).count == 3)
    }
}
