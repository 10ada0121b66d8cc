import Foundation
import Glibc
import Testing

/// Proof reuse through the Keygate socket, driven by the real `keygate --daemon` CLI in login
/// sessions with controlling terminals, the daemon asking a mock logind on a private system bus
/// for each session's lock state (`device-state = logind`) (issue 27 point 5). A proof made by a
/// `get` that prompted (answered from `--passphrase-fd 3`) is reused by a later `get
/// --no-interaction` only from the same uid, login session and terminal, within the window the
/// later request names, and not after a screen lock or `keygate lock`; a read that may not
/// prompt and finds nothing to reuse is exit 7 (errSecInteractionNotAllowed).
@Suite struct CLIReuseTests {
    let a = DaemonFixture.userA

    /// A daemon on the mock logind with user A's `userPresence` item, the password file for
    /// descriptor 3, and the environment a CLI run gets.
    final class World {
        let relay: RelayFixture
        let logind: ReuseScreenLockTests.MockLogind
        let passwordFile: String
        let environment: [String: String]

        init(uid: UInt32) throws {
            relay = try RelayFixture(deviceState: "logind")
            logind = try ReuseScreenLockTests.MockLogind(directory: relay.daemon.directory)
            relay.daemon.environment?["DBUS_SYSTEM_BUS_ADDRESS"] = logind.address
            try relay.daemon.start()
            try relay.addGated(as: uid, "gated", "me", "a-value")
            passwordFile = relay.daemon.directory + "/password-\(uid)"
            try "\(RelayFixture.passwords[uid]!)\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
            let home = relay.daemon.directory + "/home-\(uid)"
            mkdir(home, 0o700)
            chown(home, uid, uid)
            environment = [
                "PATH": "/usr/bin:/bin", "HOME": home, "XDG_DATA_HOME": home + "/data",
                "XDG_RUNTIME_DIR": home + "/run",
                "KEYGATE_SOCKET": relay.daemon.socket,
            ]
        }

        func terminal(_ uid: UInt32, session: String) throws -> ReuseTerminal {
            try ReuseTerminal(uid: uid, session: session, directory: relay.daemon.directory)
        }

        /// `keygate --daemon --reuse-seconds WINDOW get` that proves with the password.
        func prove(in terminal: ReuseTerminal, as uid: UInt32) throws -> DaemonFixture.Result {
            try terminal.run(
                as: uid,
                [
                    CLIFixture.keygatePath, "--daemon", "--reuse-seconds", "60", "--passphrase-fd", "3", "get", "-s",
                    "gated", "-a", "me", "-g", "probe.group",
                ],
                environment: environment, descriptor3: passwordFile)
        }

        /// The same read that may not prompt: served only by a proof it may reuse.
        func reread(in terminal: ReuseTerminal, as uid: UInt32, window: Int = 60) throws -> DaemonFixture.Result {
            try terminal.run(
                as: uid,
                [
                    CLIFixture.keygatePath, "--daemon", "--reuse-seconds", "\(window)", "--no-interaction", "get", "-s",
                    "gated", "-a", "me", "-g", "probe.group",
                ],
                environment: environment)
        }

        func lock(in terminal: ReuseTerminal, as uid: UInt32) throws -> DaemonFixture.Result {
            try terminal.run(as: uid, [CLIFixture.keygatePath, "--daemon", "lock"], environment: environment)
        }
    }

    func expectReused(_ result: DaemonFixture.Result, _ what: String) {
        #expect(result.status == 0 && result.lines == ["a-value"], "\(what): \(result.output)")
    }

    func expectNotReused(_ result: DaemonFixture.Result, _ what: String) {
        #expect(result.status == 7, "\(what) was served without a new proof: \(result.output)")
        #expect(!result.output.contains("a-value"), "\(what): \(result.output)")
    }

    @Test func theSameSessionAndTerminalReuseWithinTheWindowAndAZeroWindowAsksAgain() throws {
        let world = try World(uid: a)
        let terminal = try world.terminal(a, session: ReuseTests.sessionCounter.next())
        let proved = try world.prove(in: terminal, as: a)
        #expect(proved.status == 0 && proved.lines.last == "a-value", "\(proved.output)")
        expectReused(try world.reread(in: terminal, as: a), "the same terminal")
        expectNotReused(try world.reread(in: terminal, as: a, window: 0), "a request naming no window")
    }

    @Test func anotherTerminalOrSessionNeverBorrowsAProof() throws {
        let world = try World(uid: a)
        let session = ReuseTests.sessionCounter.next()
        let first = try world.terminal(a, session: session)
        let proved = try world.prove(in: first, as: a)
        #expect(proved.status == 0, "\(proved.output)")
        let sameSession = try world.terminal(a, session: session)
        expectNotReused(try world.reread(in: sameSession, as: a), "another terminal of the same session")
        let otherSession = try world.terminal(a, session: ReuseTests.sessionCounter.next())
        expectNotReused(try world.reread(in: otherSession, as: a), "another session")
        // The proof is still there for its own terminal.
        expectReused(try world.reread(in: first, as: a), "the proving terminal afterwards")
    }

    @Test func aScreenLockOrKeygateLockEndsReuse() throws {
        let world = try World(uid: a)
        let terminal = try world.terminal(a, session: ReuseTests.sessionCounter.next())
        #expect(try world.prove(in: terminal, as: a).status == 0)
        expectReused(try world.reread(in: terminal, as: a), "before the screen lock")
        try world.logind.setLocked(true)
        usleep(2_500_000)  // the daemon's watcher looks once a second
        try world.logind.setLocked(false)
        expectNotReused(try world.reread(in: terminal, as: a), "after the screen was locked and unlocked")

        #expect(try world.prove(in: terminal, as: a).status == 0)
        expectReused(try world.reread(in: terminal, as: a), "after proving again")
        let locked = try world.lock(in: terminal, as: a)
        #expect(locked.status == 0, "\(locked.output)")
        expectNotReused(try world.reread(in: terminal, as: a), "after keygate lock")
    }
}
