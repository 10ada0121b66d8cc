import Foundation
import Glibc
import KeygateItems
import KeygatePolicy
import KeygateTesting
import Testing

@testable import KeygateAudit

/// Issue 10 point 1 (session 20): the ``Auditor``'s append under group commit
/// (``JSONLinesAuditSink/store(_:at:)``) writes, between flushes, the line it rendered into a
/// reused buffer, without making an ``AuditRecord``: the trail holds the very bytes
/// ``JSONLinesAuditSink/append(_:at:)`` would have written. The idle release, re-armed lazily
/// while the sink is busy, still gives the lock up once it is idle, and a trail replaced
/// between flushes is still refused at the next lock after a flush.
@Suite struct GroupCommitStoreTests {
    /// Events whose lines differ in every part the writer renders (escapes, notes, rules,
    /// statuses, factors, a caller, an executable).
    private static func event(_ index: Int) -> AuditEvent {
        var event = AuditEvent(
            kind: index % 3 == 0 ? .read : .update,
            item: .init(accessGroup: "g", account: "user\(index) \"quoted\"\n", service: "api\\\(index)"),
            accessControl: index % 2 == 0 ? TestControls.presence : nil,
            ruleIDs: index % 4 == 0 ? ["rule-\(index)"] : [],
            decision: index % 5 == 0 ? .deny : .allow, status: index % 5 == 0 ? .authFailed : nil,
            notes: index % 3 == 1 ? [.refused("no \u{1} way")] : [],
            factors: index % 2 == 1 ? [.init(factor: .passcode, secondsAgo: index)] : [],
            processID: 42, userID: 1000, executable: index % 2 == 0 ? "/usr/bin/keygate" : nil)
        if index % 7 == 6 { event.caller = AuditCaller(userID: 7, processID: 9, executable: nil, session: "s") }
        return event
    }

    @Test func storedLinesAreTheBytesAppendWouldWrite() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let sink = GroupCommitTestSinks.sink(path, records: 8, idle: .seconds(60))
        // Stored and appended in turns, across flushes (every 8 records).
        for index in 0..<20 {
            let time = Timestamp(seconds: Int64(1_000 + index))
            if index % 6 == 5 {
                let record = try sink.append(Self.event(index), at: time)
                #expect(record.sequence == UInt64(index + 1))
            } else {
                try sink.store(Self.event(index), at: time)
            }
        }
        sink.flush()
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 20))
        let lines = try AuditTrailFile.lines(at: path)
        let records = try AuditTrailFile.records(at: path)
        try #require(lines.count == 20 && records.count == 20)
        // The same events sealed from the same genesis give the same lines, byte for byte.
        var head = AuditHead(genesis: records[0].previousHash)
        for index in 0..<20 {
            let expected = head.seal(Self.event(index), at: Timestamp(seconds: Int64(1_000 + index)))
            #expect(Array(lines[index].utf8) == Array(expected.line.utf8), "line \(index + 1)")
            #expect(records[index].hash == expected.hash)
        }
        guard case .found(let written) = try AuditHeadFile.read(path + ".head", privacy: .ownerOnly) else {
            Issue.record("no head file")
            return
        }
        #expect(written == head)
    }

    @Test func aLineTooLongIsRefusedAndNothingIsWritten() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let sink = GroupCommitTestSinks.sink(path, records: 8, idle: .seconds(60))
        try sink.store(Self.event(0), at: Timestamp(seconds: 1))  // takes the lock: the next goes between flushes
        var long = Self.event(1)
        long.accessControlText = String(repeating: "x", count: AuditRecord.maximumLineLength)
        #expect(throws: KeygateError.self) { try sink.store(long, at: Timestamp(seconds: 2)) }
        try sink.store(Self.event(2), at: Timestamp(seconds: 3))
        sink.flush()
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 2))
    }

    /// The release is scheduled once and re-armed while appends keep coming (each looks at a
    /// count, not the state's lock); once they stop, the lock is given up, and another writer's
    /// records in between keep one chain.
    @Test func theLazilyRearmedIdleReleaseStillReleasesOnceIdle() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let sink = GroupCommitTestSinks.sink(path, records: 1_000, idle: .milliseconds(2))
        // Busy for many idle periods: the release comes due and is re-armed again and again.
        for index in 0..<200 {
            try sink.store(Self.event(index), at: Timestamp(seconds: 1))
            usleep(300)
        }
        var waited = 0
        while !GroupCommitTestSinks.lockIsFree(path) && waited < 2_000 {
            try await Task.sleep(nanoseconds: 1_000_000)
            waited += 1
        }
        #expect(GroupCommitTestSinks.lockIsFree(path), "given up once the sink is idle")
        let other = GroupCommitTestSinks.sink(path, records: 1_000, idle: .seconds(60))
        try other.store(Self.event(200), at: Timestamp(seconds: 2))
        other.flush()
        try sink.store(Self.event(201), at: Timestamp(seconds: 3))
        sink.flush()
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 202))
        #expect(try AuditTrailFile.records(at: path).map(\.sequence) == Array(1...202))
    }

    /// Between flushes the sink holds the lock and checks nothing but its own length; the
    /// first append after a flush looks the paths up again: a trail replaced meanwhile is
    /// refused there (the head says records the new file does not hold).
    @Test func aTrailReplacedBetweenFlushesIsRefusedAtTheNextLock() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let sink = GroupCommitTestSinks.sink(path, records: 8, idle: .seconds(60))
        for index in 0..<3 { try sink.store(Self.event(index), at: Timestamp(seconds: 1)) }
        #expect(rename(path, path + ".old") == 0)
        let replacement = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        #expect(replacement >= 0)
        close(replacement)
        // Still between flushes: written to the file the sink holds open.
        try sink.store(Self.event(3), at: Timestamp(seconds: 1))
        sink.flush()
        #expect(throws: KeygateError.self) { try sink.store(Self.event(4), at: Timestamp(seconds: 2)) }
        #expect(try AuditTrailFile.lines(at: path + ".old").count == 4)
        #expect(try AuditTrailFile.lines(at: path).isEmpty)
    }
}
