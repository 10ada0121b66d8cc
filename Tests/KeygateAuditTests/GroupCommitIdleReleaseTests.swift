import Foundation
import Glibc
import KeygatePolicy
import KeygateTesting
import Testing

@testable import KeygateAudit

/// Issue 10 point 1 (session 21): every group-commit sink's idle release runs on one thread
/// (``IdleReleaser``) that sleeps until the earliest sink is due. A sink scheduled after
/// others with a later due time is still released once idle (the thread is woken for it), a
/// sink still busy keeps its lock, and one sink's release never gives up another's lock.
@Suite struct GroupCommitIdleReleaseTests {
    private static func event(_ index: Int) -> AuditEvent {
        AuditEvent(
            kind: .read, item: .init(accessGroup: "g", account: "user\(index)", service: "api"), decision: .allow)
    }

    /// Polls until `path`'s lock is free, for at most about two seconds.
    private static func waitForRelease(_ path: String) async throws -> Bool {
        var waited = 0
        while !GroupCommitTestSinks.lockIsFree(path) && waited < 2_000 {
            try await Task.sleep(nanoseconds: 1_000_000)
            waited += 1
        }
        return GroupCommitTestSinks.lockIsFree(path)
    }

    @Test func aSinkDueBeforeTheOthersIsReleasedWhileTheyKeepTheirLocks() async throws {
        let directory = try TemporaryDirectory()
        let slowPath = directory.path + "/slow.jsonl"
        let fastPath = directory.path + "/fast.jsonl"
        // A releaser of its own, so no other test's sink wakes its thread.
        let releaser = IdleReleaser()
        // Scheduled first, due in a minute: the releaser's thread sleeps until then...
        let slow = GroupCommitTestSinks.sink(slowPath, records: 100, idle: .seconds(60), releaser: releaser)
        try slow.store(Self.event(0), at: Timestamp(seconds: 1))
        try slow.store(Self.event(1), at: Timestamp(seconds: 1))
        #expect(!GroupCommitTestSinks.lockIsFree(slowPath))
        // ...unless a sink due sooner wakes it.
        let fast = GroupCommitTestSinks.sink(fastPath, records: 100, idle: .milliseconds(1), releaser: releaser)
        try fast.store(Self.event(0), at: Timestamp(seconds: 1))
        try fast.store(Self.event(1), at: Timestamp(seconds: 1))
        #expect(try await Self.waitForRelease(fastPath), "the sink due first is released once idle")
        #expect(!GroupCommitTestSinks.lockIsFree(slowPath), "the other keeps its lock until its own idle release")
        slow.flush()
        #expect(GroupCommitTestSinks.lockIsFree(slowPath))
        // The released sink appends again (taking the lock back), and is released again.
        try fast.store(Self.event(2), at: Timestamp(seconds: 2))
        #expect(try await Self.waitForRelease(fastPath), "released again after the next idle period")
        fast.flush()
        #expect(try AuditTrailFile.verify(at: fastPath) == .intact(records: 3))
        #expect(try AuditTrailFile.verify(at: slowPath) == .intact(records: 2))
    }

    @Test func manySinksAreEachReleasedOnceIdle() async throws {
        let directory = try TemporaryDirectory()
        let paths = (0..<8).map { directory.path + "/trail-\($0).jsonl" }
        let releaser = IdleReleaser()
        let sinks = paths.enumerated().map { index, path in
            GroupCommitTestSinks.sink(path, records: 100, idle: .milliseconds(1 + index % 3), releaser: releaser)
        }
        for round in 0..<3 {
            for (index, sink) in sinks.enumerated() {
                try sink.store(Self.event(round * 10 + index), at: Timestamp(seconds: Int64(round)))
            }
        }
        for path in paths { #expect(try await Self.waitForRelease(path), "\(path) released once idle") }
        for sink in sinks { sink.flush() }
        for path in paths { #expect(try AuditTrailFile.verify(at: path) == .intact(records: 3)) }
    }
}
