import Foundation
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
}
