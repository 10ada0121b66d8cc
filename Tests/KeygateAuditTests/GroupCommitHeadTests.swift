import Foundation
import Glibc
import KeygateItems
import KeygatePolicy
import KeygateTesting
import Testing

@testable import KeygateAudit

/// Issue 10 point 1: under group commit the head file is written at each flush, not each
/// record. Another writer, process or sink, tells from the trail's length that records were
/// appended, takes the tip from them and keeps one chain (no recover record: a head behind the
/// trail is how group commit leaves it between flushes); a writer killed between a record and
/// a flush loses no acknowledged record, and the next writer carries the chain on intact.
@Suite struct GroupCommitHeadTests {
    private static func event(_ index: Int) -> AuditEvent {
        AuditEvent(
            kind: .read, item: .init(accessGroup: "g", account: "user\(index)", service: "api"), decision: .allow)
    }

    private static func head(_ path: String) throws -> AuditHead? {
        guard case .found(let head) = try AuditHeadFile.read(path + ".head", privacy: .ownerOnly) else { return nil }
        return head
    }

    private static func records(_ path: String) throws -> [AuditRecord] { try AuditTrailFile.records(at: path) }

    @Test func theHeadFileIsWrittenAtEachFlushNotEachRecord() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let sink = JSONLinesAuditSink(path: path, durability: .groupCommit(records: 4))
        for index in 0..<6 { try sink.append(Self.event(index), at: Timestamp(seconds: 1)) }
        // Flushed at record 4; records 5 and 6 are past the head until the next flush.
        #expect(try Self.head(path)?.sequence == 4)
        #expect(try AuditTrailFile.verify(at: path) == .headBehind(records: 6, head: 4))
        sink.flush()
        #expect(try Self.head(path)?.sequence == 6)
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 6))
    }

    @Test func writersTakingTurnsKeepOneChainWithoutRecoverRecords() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let sinks = (0..<2).map { _ in JSONLinesAuditSink(path: path, durability: .groupCommit(records: 16)) }
        for index in 0..<21 {
            let record = try sinks[index % 2].append(Self.event(index), at: Timestamp(seconds: 1))
            #expect(record.sequence == UInt64(index + 1))
        }
        // No flush was due (16 records each): the head is where the trail began. A flush by the
        // writer that did not append last leaves it (the tip is not its to write); the last
        // writer's flush brings it to the tip.
        #expect(try AuditTrailFile.verify(at: path) == .headBehind(records: 21, head: 0))
        sinks[1].flush()
        #expect(try Self.head(path)?.sequence == 0)
        sinks[0].flush()
        #expect(try Self.head(path)?.sequence == 21)
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 21))
        #expect(try Self.records(path).allSatisfy { $0.event.kind == .read })
    }

    @Test func aTamperedRecordPastTheHeadIsStillRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let first = JSONLinesAuditSink(path: path, durability: .groupCommit(records: 16))
        for index in 0..<3 { try first.append(Self.event(index), at: Timestamp(seconds: 1)) }
        // Record 2 (past the head, which is at 0) is edited: it no longer chains to record 3.
        var text = try String(contentsOfFile: path, encoding: .utf8)
        text = text.replacingOccurrences(of: "user1", with: "userX")
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        let second = JSONLinesAuditSink(path: path, durability: .groupCommit(records: 16))
        let error = #expect(throws: KeygateError.self) { try second.append(Self.event(9), at: Timestamp(seconds: 1)) }
        #expect(error?.status == .io)
    }

    @Test func twoProcessesTakingTurnsThenKilledLoseNoAcknowledgedRecord() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let writers = try (0..<2).map { _ in try TrailWriterProcess(path: path, every: 5) }
        defer { for writer in writers { writer.kill() } }
        var acknowledged: [UInt64] = []
        for index in 0..<12 {
            let answer = try writers[index % 2].send("append")
            #expect(answer.hasPrefix("acked "), "\(answer)")
            acknowledged.append(UInt64(answer.dropFirst(6)) ?? 0)
        }
        #expect(acknowledged == Array(1...12))
        // kill -9 between a record and a flush: the head was last written at a flush.
        for writer in writers { writer.kill() }
        let records = try Self.records(path)
        #expect(records.map(\.sequence) == acknowledged)
        let verdict = try AuditTrailFile.verify(at: path)
        guard case .headBehind(records: 12, let head) = verdict else {
            Issue.record("expected the head behind 12 records, got \(verdict)")
            return
        }
        #expect(head < 12)
        // The next writer takes the records over and carries the chain on.
        let next = JSONLinesAuditSink(path: path, durability: .groupCommit(records: 5))
        #expect(try next.append(Self.event(99), at: Timestamp(seconds: 2)).sequence == 13)
        next.flush()
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: 13))
        #expect(try Self.records(path).allSatisfy { $0.event.kind == .read })
    }
}

/// `keygate-trail-writer PATH N`, driven a line at a time.
private final class TrailWriterProcess {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffered: [UInt8] = []

    static let executable: String = {
        var directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("keygate-trail-writer").path),
            directory.path != "/"
        {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent("keygate-trail-writer").path
    }()

    init(path: String, every: Int) throws {
        process.executableURL = URL(fileURLWithPath: Self.executable)
        process.arguments = [path, "\(every)"]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    /// Sends `command` and returns the line it answered.
    func send(_ command: String) throws -> String {
        input.fileHandleForWriting.write(Data((command + "\n").utf8))
        let descriptor = output.fileHandleForReading.fileDescriptor
        while true {
            if let end = buffered.firstIndex(of: 10) {
                let line = String(decoding: buffered[..<end], as: UTF8.self)
                buffered.removeSubrange(...end)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 512)
            let got = read(descriptor, &chunk, chunk.count)
            guard got > 0 else { return "closed" }
            buffered += chunk[..<got]
        }
    }

    /// SIGKILL, as a crash would end it.
    func kill() {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
