import Foundation
import Glibc
import KeygatePolicy
import KeygateTesting
import Testing

@testable import KeygateAudit

/// Issue 10 (session 19): under group commit the sink keeps the trail's `flock` between
/// appends (so an append is one `writev`), and gives it up at each flush, when flushed, and
/// once idle for a millisecond: another writer waits at most that long.
@Suite struct GroupCommitLockTests {
    private static func event(_ index: Int) -> AuditEvent {
        AuditEvent(
            kind: .read, item: .init(accessGroup: "g", account: "user\(index)", service: "api"), decision: .allow)
    }

    @Test func theLockIsKeptBetweenAppendsUntilFlushed() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let sink = GroupCommitTestSinks.sink(path, records: 8, idle: .seconds(60))
        try sink.append(Self.event(0), at: Timestamp(seconds: 1))
        try sink.append(Self.event(1), at: Timestamp(seconds: 1))
        #expect(!GroupCommitTestSinks.lockIsFree(path), "kept between appends")
        sink.flush()
        #expect(GroupCommitTestSinks.lockIsFree(path), "given up when flushed")
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 2))
    }

    @Test func theLockIsGivenUpWhenIdle() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let sink = JSONLinesAuditSink(path: path, durability: .groupCommit(records: 8))
        try sink.append(Self.event(0), at: Timestamp(seconds: 1))
        try sink.append(Self.event(1), at: Timestamp(seconds: 1))
        var waited = 0
        while !GroupCommitTestSinks.lockIsFree(path) && waited < 2_000 {
            try await Task.sleep(nanoseconds: 1_000_000)
            waited += 1
        }
        #expect(GroupCommitTestSinks.lockIsFree(path), "given up once the sink is idle")
        // Another writer (its own sink) appends meanwhile, and the chain stays one.
        let other = JSONLinesAuditSink(path: path, durability: .groupCommit(records: 8))
        try other.append(Self.event(2), at: Timestamp(seconds: 2))
        other.flush()
        try sink.append(Self.event(3), at: Timestamp(seconds: 3))
        sink.flush()
        #expect(GroupCommitTestSinks.lockIsFree(path), "given up when flushed")
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 4))
        #expect(try AuditTrailFile.records(at: path).map(\.sequence) == [1, 2, 3, 4])
    }

    @Test func theLockIsGivenUpAtEachFlush() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let sink = GroupCommitTestSinks.sink(path, records: 4, idle: .seconds(60))
        for index in 0..<3 { try sink.append(Self.event(index), at: Timestamp(seconds: 1)) }
        #expect(!GroupCommitTestSinks.lockIsFree(path))
        try sink.append(Self.event(3), at: Timestamp(seconds: 1))  // the fourth: a flush starts
        #expect(GroupCommitTestSinks.lockIsFree(path))
        sink.flush()
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 4))
    }

    /// Under ``JSONLinesAuditSink/Durability/eachRecord`` the lock is never kept.
    @Test func eachRecordNeverKeepsTheLock() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let sink = JSONLinesAuditSink(path: path)
        try sink.append(Self.event(0), at: Timestamp(seconds: 1))
        #expect(GroupCommitTestSinks.lockIsFree(path))
    }
}
