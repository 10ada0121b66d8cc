import Foundation
import Glibc
import Testing

/// The daemon's failure counters (issue 15 point 3): five failures lock the uid's passcode out
/// (spec §4.3), counted in the uid's state directory, so the lockout holds across parallel
/// connections and daemon restarts; a counter file the daemon did not write fails closed.
@Suite struct LockoutTests {
    let a = DaemonFixture.userA
    let b = DaemonFixture.userB

    /// The uid's counter file.
    func counter(_ world: RelayFixture, _ uid: UInt32) -> String { "\(world.daemon.state)/users/\(uid)/attempts" }

    /// Five wrong passphrases from five parallel connections of A.
    func failInParallel(_ world: RelayFixture) throws {
        let clients = try (0..<5).map { _ in try world.background(as: a, "answer", "gated", "me", answer: "wrong") }
        for client in clients {
            #expect(client.finish() == 1, "\(client.output)")
            #expect(client.output.contains("error -25293"), "\(client.output)")
        }
    }

    @Test func fiveFailuresAcrossParallelConnectionsLockOutAndTheLockoutSurvivesARestart() throws {
        let world = try RelayFixture()
        try world.daemon.start()
        try world.addGated(as: a, "gated", "me", "a-value")
        try world.addGated(as: b, "gated", "me", "b-value")
        try failInParallel(world)
        // Locked out: the right passphrase is not even asked for.
        let locked = try world.relay(as: a, "answer", "gated", "me", answer: "pass-a")
        #expect(locked.lines.last?.hasPrefix("error -25293") == true, "\(locked.output)")
        #expect(locked.output.contains("locked out"), "\(locked.output)")
        #expect(!locked.output.contains("prompt 1"))
        // The counter is a root-only file in A's state directory.
        var info = stat()
        #expect(lstat(counter(world, a), &info) == 0)
        #expect(info.st_uid == 0 && info.st_mode & 0o077 == 0)

        world.daemon.stop()
        try world.daemon.start()
        let afterRestart = try world.relay(as: a, "answer", "gated", "me", answer: "pass-a")
        #expect(afterRestart.lines.last?.hasPrefix("error -25293") == true, "\(afterRestart.output)")
        #expect(!afterRestart.output.contains("prompt 1"))
        // B's counter is B's own.
        #expect(try world.relay(as: b, "answer", "gated", "me", answer: "pass-b").lines.last == "b-value")
    }

    @Test(arguments: ["garbage\n", "keygate-attempts 1\npasscode 0 - -\n"])
    func aCorruptOrForeignCounterFileFailsClosedAndIsNeverReset(content: String) throws {
        let world = try RelayFixture()
        try world.daemon.start()
        try world.addGated(as: a, "gated", "me", "a-value")
        world.daemon.stop()
        let path = counter(world, a)
        try content.write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, 0o600)
        // A well-formed file that someone else owns is as untrusted as a corrupt one.
        if !content.hasPrefix("garbage") { chown(path, a, a) }
        try world.daemon.start()
        let denied = try world.relay(as: a, "answer", "gated", "me", answer: "pass-a")
        #expect(denied.lines.last?.hasPrefix("error -25293") == true, "\(denied.output)")
        #expect(!denied.output.contains("a-value"))
        #expect(world.daemon.log.contains(path), "\(world.daemon.log)")
        #expect((try? String(contentsOfFile: path, encoding: .utf8)) == content)
    }

    @Test func aSuccessClearsTheCountBeforeTheLimit() throws {
        let world = try RelayFixture()
        try world.daemon.start()
        try world.addGated(as: a, "gated", "me", "a-value")
        for _ in 0..<4 {
            #expect(try world.relay(as: a, "answer", "gated", "me", answer: "wrong").status == 1)
        }
        #expect(try world.relay(as: a, "answer", "gated", "me", answer: "pass-a").lines.last == "a-value")
        #expect(try world.relay(as: a, "answer", "gated", "me", answer: "wrong").status == 1)
        #expect(try world.relay(as: a, "answer", "gated", "me", answer: "pass-a").lines.last == "a-value")
        let text = try String(contentsOfFile: counter(world, a), encoding: .utf8)
        #expect(text.hasPrefix("keygate-attempts 1\npasscode 0 - -\n"), "\(text)")
    }
}
