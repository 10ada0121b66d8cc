import Foundation
import Glibc
import Keygate
import Testing

/// Issue 15 points 1 and 5: each caller's decisions go to its own trail in the daemon's state
/// directory, every record naming the caller as the kernel saw it, durable before the reply,
/// and served back (`auditShow`, `auditVerify`) to that caller only.
@Suite struct AuditTrailTests {
    static let a = DaemonFixture.userA
    static let b = DaemonFixture.userB

    static func trail(_ daemon: DaemonFixture, _ uid: UInt32) -> String { "\(daemon.state)/users/\(uid)/audit.jsonl" }

    static func records(_ result: DaemonFixture.Result) throws -> [TrailRecord] {
        try #require(result.status == 0, "\(result.output)")
        return try result.lines.map(TrailRecord.init)
    }

    /// The daemon takes embedded mode's durability path (issue 28 point 1): an add's record is
    /// committed in the item's own transaction (held in the uid's store, beside the item), a
    /// read's is flushed in the trail (nothing commits it); both survive as the trail verifies.
    @Test func anAddsRecordIsCommittedWithTheItemAsEmbedded() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        #expect(try daemon.probe(as: Self.a, "add", "mail", "me", "v").lines == ["ok"])
        #expect(try daemon.probe(as: Self.a, "get", "mail", "me").lines == ["v"])
        let store = try SQLiteItemStore(path: "\(daemon.state)/users/\(Self.a)/items.db")
        let keeper = AuditAnchorKeeper(store: store, trail: Self.trail(daemon, Self.a))
        let lines = try String(contentsOfFile: Self.trail(daemon, Self.a), encoding: .utf8)
            .split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(try keeper.heldRecords() == [HeldAuditRecord(sequence: 1, line: lines[0])], "the add's, not the read's")
        #expect(try keeper.anchor()?.sequence == 1)
        #expect(try daemon.probe(as: Self.a, "audit-verify").lines == ["verified 2"])
    }

    @Test func recordsNameTheCallersUidPidExecutableAndSession() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        let session = try AuditSession()
        let (pid, added) = try session.probe(daemon, as: Self.a, "add", "mail", "me", "s3cret-value")
        #expect(added.lines == ["ok"])
        let (readPID, read) = try session.probe(daemon, as: Self.a, "get", "mail", "me")
        #expect(read.lines == ["s3cret-value"])
        #expect(try daemon.probe(as: Self.a, "count").lines == ["1"])

        let shown = try Self.records(try daemon.probe(as: Self.a, "audit-show", "0"))
        #expect(shown.map(\.op) == ["add", "read", "read"])
        let add = try #require(shown.first)
        #expect(add.decision == "allow")
        #expect(add.service == "mail" && add.account == "me")
        #expect(add.callerUID == Int(Self.a))
        #expect(add.callerPID == Int(pid))
        let probe = URL(fileURLWithPath: DaemonFixture.probePath).resolvingSymlinksInPath().path
        #expect(add.caller?["exe"] as? String == probe)
        #expect(add.caller?["session"] as? String == session.id)
        // The record's own pid, uid and exe are the daemon's: it decided and wrote the record.
        #expect(add.fields["uid"] as? Int == 0)
        #expect(add.fields["pid"] as? Int == Int(daemon.process?.processIdentifier ?? -1))
        #expect((add.fields["exe"] as? String)?.hasSuffix("/keygated") == true)
        #expect(shown[1].callerPID == Int(readPID))
        #expect(shown[1].caller?["session"] as? String == session.id)
        // A probe outside any session is recorded without one (null); the value is in no record.
        #expect(shown[2].callerUID == Int(Self.a))
        #expect(shown[2].caller?["session"] is NSNull)
        #expect(shown[2].callerPID != Int(pid) && shown[2].callerPID != Int(readPID))
        let file = try String(contentsOfFile: Self.trail(daemon, Self.a), encoding: .utf8)
        #expect(!file.contains("s3cret-value"))
        // `limit` gives the newest records, oldest first.
        #expect(try Self.records(try daemon.probe(as: Self.a, "audit-show", "2")).map(\.sequence) == [2, 3])

        // The trail is root's, 0600, beside the store, and verifies.
        var info = stat()
        #expect(stat(Self.trail(daemon, Self.a), &info) == 0)
        #expect(info.st_uid == 0 && info.st_mode & 0o777 == 0o600)
        #expect(try daemon.probe(as: Self.a, "audit-verify").lines == ["verified 3"])
    }

    @Test func userBsAuditShowNeverContainsUserAsRecords() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        #expect(try daemon.probe(as: Self.a, "add", "a-only", "alice", "v").lines == ["ok"])
        #expect(try daemon.probe(as: Self.a, "get", "a-only", "alice").lines == ["v"])
        #expect(try daemon.probe(as: Self.b, "add", "b-only", "bob", "w").lines == ["ok"])
        #expect(try daemon.probe(as: Self.b, "get", "b-only", "bob").lines == ["w"])
        // B looking for A's item finds nothing, and decides nothing to record.
        #expect(try daemon.probe(as: Self.b, "get", "a-only", "alice").lines.first?.hasPrefix("error -25300") == true)

        let bShown = try daemon.probe(as: Self.b, "audit-show", "0")
        let bRecords = try Self.records(bShown)
        #expect(bRecords.map(\.op) == ["add", "read"])
        #expect(bRecords.allSatisfy { $0.callerUID == Int(Self.b) })
        #expect(bRecords.allSatisfy { $0.account == "bob" })
        #expect(!bShown.output.contains("alice"))
        #expect(!bShown.output.contains("\"uid\": \(Self.a)"))
        #expect(try daemon.probe(as: Self.b, "audit-verify").lines == ["verified 2"])

        let aRecords = try Self.records(try daemon.probe(as: Self.a, "audit-show", "0"))
        #expect(aRecords.map(\.op) == ["add", "read"])
        #expect(aRecords.allSatisfy { $0.callerUID == Int(Self.a) })
        #expect(aRecords.allSatisfy { $0.account == "alice" })
        // A uid that has done nothing yet has an empty, intact trail.
        #expect(try daemon.probe(as: 61_003, "audit-show", "0").lines == [])
        #expect(try daemon.probe(as: 61_003, "audit-verify").lines == ["verified 0"])
    }

    @Test func verifyIsIntactAfterManyParallelRequestsFromTwoConnectionsOfOneUid() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        let count = 150
        var adders: [(Process, String)] = []
        for prefix in ["left", "right"] {
            let output = daemon.directory + "/\(prefix).out"
            let process = try DaemonFixture.launch(
                "/usr/bin/setpriv",
                [
                    "--reuid=\(Self.a)", "--regid=\(Self.a)", "--clear-groups", DaemonFixture.probePath,
                    daemon.socket, "add-many", prefix, "\(count)",
                ], output: output)
            adders.append((process, output))
        }
        let deadline = Date().addingTimeInterval(120)
        while adders.contains(where: { $0.0.isRunning }) && Date() < deadline { usleep(10_000) }
        for (process, output) in adders {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            let text = try String(contentsOfFile: output, encoding: .utf8)
            #expect(text.split(separator: "\n").count == count, "\(text.suffix(200))")
        }
        #expect(try daemon.probe(as: Self.a, "audit-verify").lines == ["verified \(2 * count)"])
        let records = try Self.records(try daemon.probe(as: Self.a, "audit-show", "0"))
        #expect(records.map(\.sequence) == Array(1...(2 * count)))
        // One record per add, each naming the connection that made it.
        for (process, _) in adders {
            let own = records.filter { $0.callerPID == Int(process.processIdentifier) }
            #expect(own.count == count)
            #expect(Set(own.compactMap(\.service)).count == 1)
        }
    }

    @Test func afterKillNineOfTheDaemonEveryAcknowledgedAddHasItsRecord() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        let output = daemon.directory + "/adds.out"
        let adder = try DaemonFixture.launch(
            "/usr/bin/setpriv",
            [
                "--reuid=\(Self.a)", "--regid=\(Self.a)", "--clear-groups", DaemonFixture.probePath, daemon.socket,
                "add-many", "crash", "100000",
            ], output: output)
        func acked() -> [String] {
            ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: "\n")
                .filter { $0.hasPrefix("acked ") }.map { String($0.dropFirst("acked ".count)) }
        }
        let deadline = Date().addingTimeInterval(20)
        while acked().count < 40 && Date() < deadline { usleep(2_000) }
        daemon.stop(signal: SIGKILL)
        adder.waitUntilExit()
        let acknowledged = acked()
        #expect(acknowledged.count >= 40)
        try daemon.start()
        // Not broken (at most a partial record past the head, which the next record recovers).
        #expect(try daemon.probe(as: Self.a, "audit-verify").lines.first?.hasPrefix("verified ") == true)
        let recorded = Set(
            try Self.records(try daemon.probe(as: Self.a, "audit-show", "0"))
                .filter { $0.op == "add" && $0.decision == "allow" }.compactMap(\.account))
        let missing = acknowledged.filter { !recorded.contains($0) }
        #expect(missing.isEmpty, "acknowledged adds without a record: \(missing)")
        // The trail goes on from where it was: the next add is recorded and the chain holds.
        #expect(try daemon.probe(as: Self.a, "add", "after", "crash", "v").lines == ["ok"])
        let after = try daemon.probe(as: Self.a, "audit-verify").lines.first ?? ""
        #expect(after.hasPrefix("verified "), "\(after)")
        #expect(try Self.records(try daemon.probe(as: Self.a, "audit-show", "1")).first?.service == "after")
    }

    @Test func aRecordEditedOnDiskIsReportedAndNothingMoreIsDecided() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        for account in ["one", "two", "three"] {
            #expect(try daemon.probe(as: Self.a, "add", "svc", account, "v").lines == ["ok"])
        }
        #expect(try daemon.probe(as: Self.a, "audit-verify").lines == ["verified 3"])
        // Root (someone with the state directory) turns record 2's allow into a deny.
        let path = Self.trail(daemon, Self.a)
        let original = try String(contentsOfFile: path, encoding: .utf8)
        var lines = original.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        try #require(lines.count == 4 && lines[1].contains(#""account": "two""#))
        lines[1] = lines[1].replacingOccurrences(of: #""decision": "allow""#, with: #""decision": "deny""#)
        try lines.joined(separator: "\n").write(toFile: path, atomically: false, encoding: .utf8)

        let verdict = try daemon.probe(as: Self.a, "audit-verify")
        #expect(verdict.status == 0)
        #expect(
            verdict.lines == ["broken 1 broken at sequence 2: record 2 was changed (record 3 no longer matches it)"])
        // The daemon refuses to extend the broken chain: the add is denied (errSecIO), the item is
        // not stored, and the trail is neither extended nor restarted.
        let refused = try daemon.probe(as: Self.a, "add", "svc", "four", "v")
        #expect(refused.status == 1)
        #expect(refused.lines.first?.hasPrefix("error -36 ") == true, "\(refused.output)")
        #expect(!refused.output.contains(daemon.state), "a path reached the client: \(refused.output)")
        #expect(try daemon.probe(as: Self.a, "get", "svc", "one").lines.first?.hasPrefix("error -36 ") == true)
        #expect(try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").count == 3)
        #expect(daemon.log.contains("uid \(Self.a) pid "))
        #expect(daemon.log.contains("is broken at sequence 2"))
        // Once the administrator puts the trail back, the daemon goes on: the refused add was
        // never stored.
        try original.write(toFile: path, atomically: false, encoding: .utf8)
        #expect(try daemon.probe(as: Self.a, "get", "svc", "four").lines.first?.hasPrefix("error -25300") == true)
        #expect(try daemon.probe(as: Self.a, "audit-verify").lines.first?.hasPrefix("verified ") == true)
        // Other users are unaffected.
        #expect(try daemon.probe(as: Self.b, "add", "svc", "four", "v").lines == ["ok"])
        #expect(try daemon.probe(as: Self.b, "audit-verify").lines == ["verified 1"])
    }

    @Test func aTrailDeletedWithItsHeadIsRefusedNotStartedAgain() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        #expect(try daemon.probe(as: Self.a, "add", "svc", "one", "v").lines == ["ok"])
        let path = Self.trail(daemon, Self.a)
        #expect(unlink(path) == 0 && unlink(path + ".head") == 0)
        let verdict = try daemon.probe(as: Self.a, "audit-verify").lines.first ?? ""
        #expect(verdict.hasPrefix("broken 0 broken at sequence 1: "), "\(verdict)")
        #expect(verdict.contains("deleted or restarted"))
        #expect(!verdict.contains(daemon.state))
        let refused = try daemon.probe(as: Self.a, "add", "svc", "two", "v")
        #expect(refused.lines.first?.hasPrefix("error -36 ") == true, "\(refused.output)")
        #expect(!refused.output.contains(daemon.state))
        // No new chain was started: the trail holds no record.
        #expect(((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").isEmpty)
        #expect(try daemon.probe(as: Self.a, "audit-show", "0").lines == [])
    }
}

extension AuditTrailTests {
    /// Another trail copied over A's (B's, intact in itself, the same length): the daemon notices
    /// the file changed, finds it no longer reaches A's anchor, and refuses it.
    @Test func aTrailReplacedByAnotherIntactOneIsRefused() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        #expect(try daemon.probe(as: Self.a, "add", "svc", "acc", "v").lines == ["ok"])
        #expect(try daemon.probe(as: Self.b, "add", "svc", "acc", "v").lines == ["ok"])
        let mine = Self.trail(daemon, Self.a)
        let theirs = Self.trail(daemon, Self.b)
        for suffix in ["", ".head"] {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: theirs + suffix))
            // Written in place: the same inode, so only its contents (and change time) differ.
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: mine + suffix))
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: bytes)
            try handle.close()
        }
        let verdict = try daemon.probe(as: Self.a, "audit-verify").lines.first ?? ""
        #expect(verdict.hasPrefix("broken "), "\(verdict)")
        let refused = try daemon.probe(as: Self.a, "add", "svc", "other", "v")
        #expect(refused.lines.first?.hasPrefix("error -36 ") == true, "\(refused.output)")
        #expect(!refused.output.contains(daemon.state))
        #expect(try String(contentsOfFile: mine, encoding: .utf8).split(separator: "\n").count == 1)
    }
}

extension AuditTrailTests {
    /// A line that is not a record, added at the end: verify names the line, never the path.
    @Test func aLineThatIsNotARecordIsReportedWithoutAPath() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        #expect(try daemon.probe(as: Self.a, "add", "svc", "acc", "v").lines == ["ok"])
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: Self.trail(daemon, Self.a)))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("not a record\n".utf8))
        try handle.close()
        let verdict = try daemon.probe(as: Self.a, "audit-verify").lines.first ?? ""
        #expect(verdict.hasPrefix("broken 1 broken at sequence 2: line 2 is not an audit record: "), "\(verdict)")
        #expect(!verdict.contains(daemon.state))
        // auditShow still shows what is there, the foreign line included.
        #expect(try daemon.probe(as: Self.a, "audit-show", "1").lines == ["not a record"])
        #expect(try daemon.probe(as: Self.a, "add", "svc", "two", "v").lines.first?.hasPrefix("error -36 ") == true)
    }
}

/// `auditShow` answers within the frame limit or says how many fit, never a cut trail.
@Suite struct AuditShowLimitTests {
    @Test func aShowThatDoesNotFitOneReplyAsksForFewer() throws {
        let daemon = try DaemonFixture(config: "max-frame-size = 4096\n")
        try daemon.start()
        let a = DaemonFixture.userA
        let added = try daemon.probe(as: a, "add-many", "big", "12")
        #expect(added.lines.count == 12)
        let all = try daemon.probe(as: a, "audit-show", "0")
        #expect(all.status == 1)
        #expect(all.lines.first?.hasPrefix("error -108 ") == true, "\(all.output)")
        #expect(all.output.contains("ask for fewer"))
        let newest = try AuditTrailTests.records(try daemon.probe(as: a, "audit-show", "3"))
        #expect(newest.map(\.sequence) == [10, 11, 12])
        #expect(newest.map(\.account) == ["9", "10", "11"])
        #expect(try daemon.probe(as: a, "audit-verify").lines == ["verified 12"])
    }
}
