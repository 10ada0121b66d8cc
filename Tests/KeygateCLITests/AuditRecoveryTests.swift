import Foundation
import Testing

/// Issue 9 point 4 through the binary: failed head writes never brick the store.
@Suite struct AuditRecoveryTests {
    /// Makes the trail's head writes fail (a full disk, EIO) while `body` runs. (The head is
    /// written in place, so there is no temporary file to get in its way: the debug build's
    /// fault switch stands in for the failure.)
    static func withFailingHeadWrites(_ world: CLIWorld, _ body: () throws -> Void) throws {
        world.extraEnvironment["KEYGATE_TEST_FAIL_HEAD_WRITES"] = world.audit
        defer { world.extraEnvironment["KEYGATE_TEST_FAIL_HEAD_WRITES"] = nil }
        try body()
    }

    @Test func twoFailedHeadWritesDoNotBrickTheStore() throws {
        let world = try CLIWorld(password: nil)
        #expect(try world.add("api", "me", Data("value-1".utf8)).status == 0)
        try Self.withFailingHeadWrites(world) {
            for _ in 0..<2 {
                let result = try world.run(["get", "--service", "api", "--account", "me"])
                #expect(result.status == 1)
                #expect(result.stdout.isEmpty, "a read whose record is not complete is refused")
                #expect(result.lastErrorLine.contains("audit record could not be written"))
            }
        }
        let verify = try world.run(["audit", "verify"])
        #expect(verify.status == 0, "a failed head write is not tampering: \(verify.stderr)")
        #expect(verify.stdoutText.contains("but the head is at record"))
        // The condition is gone: everything works again, and the trail is intact.
        let read = try world.run(["get", "--service", "api", "--account", "me"])
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout == Data("value-1".utf8))
        #expect(try world.run(["list"]).status == 0)
        #expect(try world.add("api", "you", Data("value-2".utf8)).status == 0)
        #expect(try world.run(["delete", "--service", "api", "--account", "you"]).status == 0)
        let after = try world.run(["audit", "verify"])
        #expect(after.status == 0)
        #expect(after.stdoutText.contains("intact") && !after.stdoutText.contains("but the head"))
        #expect(try world.run(["audit", "show"]).stdoutText.contains("\"op\": \"recover\""))
    }

    @Test func auditRepairSaysWhatItDid() throws {
        let world = try CLIWorld(password: nil)
        #expect(try world.add("api", "me", Data("v".utf8)).status == 0)
        try Self.withFailingHeadWrites(world) {
            for _ in 0..<2 { _ = try world.run(["get", "--service", "api", "--account", "me"]) }
        }
        let repaired = try world.run(["audit", "repair"])
        #expect(repaired.status == 0, "\(repaired.stderr)")
        #expect(repaired.stdoutText.contains("repaired: the head was at record"))
        #expect(repaired.stdoutText.contains("record(s) written past it; recorded this as record"))
        let again = try world.run(["audit", "repair"])
        #expect(again.stdoutText.contains("nothing to repair"))
        #expect(try world.run(["audit", "verify"]).stdoutText.contains("intact"))
        #expect(try world.run(["audit", "--help"]).stdoutText.contains("repair"))
    }

    @Test func tamperingIsNotRepaired() throws {
        let world = try CLIWorld(password: nil)
        #expect(try world.add("api", "me", Data("v".utf8)).status == 0)
        #expect(try world.add("api", "you", Data("v".utf8)).status == 0)
        var lines = try String(contentsOfFile: world.audit, encoding: .utf8).split(separator: "\n").map(String.init)
        lines[0] = lines[0].replacingOccurrences(of: "\"allow\"", with: "\"deny\"")
        try (lines.joined(separator: "\n") + "\n").write(toFile: world.audit, atomically: false, encoding: .utf8)
        let result = try world.run(["audit", "repair"])
        #expect(result.status == 9)
        #expect(result.lastErrorLine.contains("tampering is not repaired"))
    }
}

/// Issue 9 point 5 through the binary: a trail deleted with its head is noticed.
@Suite struct AuditAnchorCommandTests {
    @Test func aTrailDeletedWithItsHeadStopsTheStoreAndFailsVerify() throws {
        let world = try CLIWorld(password: nil)
        #expect(try world.add("api", "me", Data("v".utf8)).status == 0)
        #expect(try world.run(["get", "--service", "api", "--account", "me"]).status == 0)
        try FileManager.default.removeItem(atPath: world.audit)
        try FileManager.default.removeItem(atPath: world.audit + ".head")
        let verify = try world.run(["audit", "verify"])
        #expect(verify.status == 9)
        #expect(verify.lastErrorLine.contains("deleted or restarted"), "\(verify.lastErrorLine)")
        let read = try world.run(["get", "--service", "api", "--account", "me"])
        #expect(read.status == 1)
        #expect(read.stdout.isEmpty)
        #expect(read.lastErrorLine.contains("deleted or restarted"))
        let repair = try world.run(["audit", "repair"])
        #expect(repair.status == 9, "a vanished trail is not repaired unasked")
        #expect(repair.lastErrorLine.contains("--restart"))
        let restart = try world.run(["audit", "repair", "--restart"])
        #expect(restart.status == 0, "\(restart.stderr)")
        #expect(restart.stdoutText.contains("replaced the store's anchor"))
        #expect(try world.run(["get", "--service", "api", "--account", "me"]).stdout == Data("v".utf8))
        #expect(try world.run(["audit", "verify"]).stdoutText.contains("intact"))
    }
}

/// Issue 10 (session 20) through the binary: adds whose records the store holds survive a
/// power loss that cut the trail short; verify says so (not tampering) and repair restores them.
@Suite struct HeldAuditRecordCommandTests {
    @Test func aTrailCutShortBehindHeldRecordsIsReportedAndRepaired() throws {
        let world = try CLIWorld(password: nil)
        #expect(try world.add("api", "first", Data("v".utf8)).status == 0)
        #expect(try world.run(["get", "--service", "api", "--account", "first"]).status == 0)  // flushed
        let durable = try FileManager.default.attributesOfItem(atPath: world.audit)[.size] as? Int ?? 0
        #expect(try world.add("api", "a", Data("v".utf8)).status == 0)
        #expect(try world.add("api", "b", Data("v".utf8)).status == 0)
        // A power loss: what the adds wrote to the trail (never flushed there) is gone.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: world.audit))
        try handle.truncate(atOffset: UInt64(durable))
        try handle.close()
        let verify = try world.run(["audit", "verify"])
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(verify.stdoutText.contains("2 more held in the store"), "\(verify.stdoutText)")
        let repair = try world.run(["audit", "repair"])
        #expect(repair.status == 0, "\(repair.stderr)")
        #expect(repair.stdoutText.contains("wrote back the 2 record(s) the store held"), "\(repair.stdoutText)")
        let after = try world.run(["audit", "verify"])
        #expect(after.stdoutText.contains("intact (5 records)"), "\(after.stdoutText)")
        #expect(try world.run(["get", "--service", "api", "--account", "b"]).stdout == Data("v".utf8))
    }
}
