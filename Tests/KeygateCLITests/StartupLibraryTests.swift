import Foundation
import KeygateTesting
import Testing

/// Issue 10 point 4: `keygate get` of a plain item loads only what it needs at start-up.
@Suite struct StartupLibraryTests {
    /// libpam is opened only when a command authenticates: a plain `get` never loads it (the
    /// dynamic linker's own list of the files it loaded says so), while a `userPresence` read
    /// under pam_wrapper loads it, goes through the wrapper's service directory and succeeds.
    @Test func libpamIsLoadedOnlyByACommandThatAuthenticates() throws {
        let world = try CLIWorld()
        #expect(try world.add("api", "me", Data("plain".utf8)).status == 0)
        #expect(try world.add("bank", "me", Data("gated".utf8), ["--access-control", "userPresence"]).status == 0)
        world.extraEnvironment["LD_DEBUG"] = "files"
        world.extraEnvironment["LD_PRELOAD"] = ""
        let plain = try world.run(["get", "--service", "api", "--account", "me"])
        #expect(plain.status == 0)
        #expect(plain.stdoutText == "plain")
        #expect(plain.stderr.contains("file=libc.so.6"))
        #expect(!plain.stderr.contains("libpam"), "\(plain.stderr)")
        world.extraEnvironment["LD_PRELOAD"] = nil
        let wrong = try world.run(["get", "--service", "bank", "--account", "me"], passphrase: "wrong")
        #expect(wrong.status == 5)
        let gated = try world.run(["get", "--service", "bank", "--account", "me"], passphrase: "s3cret")
        #expect(gated.status == 0)
        #expect(gated.stdoutText == "gated")
        #expect(gated.stderr.contains("file=libpam.so.0"))
    }

    /// In a login session the lock state is asked of logind on the wire, without loading
    /// libsystemd: against a bus that has no logind (a `dbus-daemon` of the test's own), a plain
    /// `get` answers (no logind: no session to be locked) and the dynamic linker loaded no
    /// libsystemd; without a bus socket the same.
    @Test func theSessionLockQuestionLoadsNoLibsystemd() throws {
        let world = try CLIWorld()
        #expect(try world.add("api", "me", Data("plain".utf8)).status == 0)
        let directory = world.directory.url.appendingPathComponent("bus").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try """
        <busconfig><listen>unix:path=\(directory)/socket</listen><auth>EXTERNAL</auth>
        <policy context="default"><allow user="*"/><allow own="*"/><allow send_destination="*"/>
        <allow receive_sender="*"/></policy></busconfig>
        """.write(toFile: directory + "/bus.conf", atomically: true, encoding: .utf8)
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        daemon.arguments = ["--config-file=\(directory)/bus.conf", "--nofork"]
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        defer {
            // SIGKILL: a process started from a test's thread inherits its blocked signals, SIGTERM too.
            kill(daemon.processIdentifier, SIGKILL)
            daemon.waitUntilExit()
        }
        var waited = 0
        while !FileManager.default.fileExists(atPath: directory + "/socket") && waited < 200 {
            usleep(25_000)
            waited += 1
        }
        world.extraEnvironment["LD_PRELOAD"] = ""
        world.extraEnvironment["LD_DEBUG"] = "files"
        world.extraEnvironment["XDG_SESSION_ID"] = "7"
        world.extraEnvironment["KEYGATE_DEVICE_STATE"] = nil
        for address in ["unix:path=\(directory)/socket", "unix:path=\(directory)/missing"] {
            world.extraEnvironment["DBUS_SYSTEM_BUS_ADDRESS"] = address
            let result = try world.run(["get", "--service", "api", "--account", "me"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdoutText == "plain")
            #expect(result.stderr.contains("file=libc.so.6"))
            #expect(!result.stderr.contains("libsystemd"), "\(address): \(result.stderr)")
        }
    }
}
