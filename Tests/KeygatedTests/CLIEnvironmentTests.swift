import Foundation
import Glibc
import Testing

/// What a user's own processes can write or set changes no decision in daemon mode (issue 15,
/// tests, second point): proof records written into the runtime directory, `XDG_SESSION_ID`,
/// `KEYGATE_DEVICE_STATE`, and deleting every file the user owns. Each attack is first shown to
/// work embedded, where the user's files are the gate's, so the daemon-mode check proves something.
@Suite struct CLIEnvironmentTests {
    static let a = DaemonFixture.userA

    /// Writes, as `uid`, a passcode proof made now for login session `session` into the user's
    /// `$XDG_RUNTIME_DIR/keygate/`, in the format embedded mode keeps its own records in.
    static func forgeProof(_ cli: CLIFixture, uid: UInt32, session: String) throws {
        let boot = try String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let now = Int64(Date().timeIntervalSince1970 * 1e9)
        let record = #"[{"uid":\#(uid),"boot":"\#(boot)","session":"\#(session)","factor":"passcode","time":\#(now)}]"#
        let runtime = cli.environment(uid)["XDG_RUNTIME_DIR"] ?? ""
        let script = """
            umask 077 && mkdir -p "$1/keygate" && printf '%s' "$2" > "$1/keygate/proofs-$3.json" \
              && : > "$1/keygate/boot-$3-$4" && echo forged
            """
        let forged = try cli.daemon.run(as: uid, "/bin/sh", ["-c", script, "sh", runtime, record, "\(uid)", boot])
        #expect(forged.lines == ["forged"], "\(forged.output)")
    }

    @Test func forgedProofRecordsAndASessionIdReadNothingThroughTheDaemon() throws {
        let daemon = try DaemonFixture(config: "device-state = unlocked\n")
        try daemon.start()
        let cli = CLIFixture(daemon: daemon)
        for mode in ["--daemon", "--embedded"] {
            let added = try cli.run(
                as: Self.a, [mode, "add", "-s", "gated", "-a", "me", "--access-control", "userPresence"],
                stdin: "guarded")
            #expect(added.status == 0, "\(mode): \(added.stderr)")
        }
        try Self.forgeProof(cli, uid: Self.a, session: "s1")
        let attack: [String: String?] = ["XDG_SESSION_ID": "s1", "KEYGATE_DEVICE_STATE": "unlocked"]
        let get = ["--no-interaction", "get", "-s", "gated", "-a", "me"]
        // Embedded, the forged record is a proof: the value comes out without PAM.
        let embedded = try cli.run(
            as: Self.a, ["--embedded", "--reuse-seconds", "300"] + get, environment: attack)
        #expect(embedded.status == 0 && embedded.stdout == "guarded", "\(embedded.stderr)")
        // Through the daemon it is nothing: a proof is needed, and it may not ask (exit 7).
        let viaDaemon = try cli.run(as: Self.a, ["--daemon", "--reuse-seconds", "300"] + get, environment: attack)
        #expect(viaDaemon.status == 7, "\(viaDaemon.stderr)")
        #expect(viaDaemon.stdout.isEmpty)
        // Deleting everything the user owns (store, trail, ledger, proof records) changes nothing
        // the daemon keeps: the item is still there and still gated.
        let wiped = try daemon.run(
            as: Self.a, "/bin/sh", ["-c", "rm -rf \"$1\"/* && echo wiped", "sh", cli.home(Self.a)])
        #expect(wiped.lines == ["wiped"], "\(wiped.output)")
        #expect(try cli.run(as: Self.a, ["--daemon", "--reuse-seconds", "300"] + get, environment: attack).status == 7)
        let listed = try cli.run(as: Self.a, ["--daemon", "list"])
        #expect(listed.lines.count == 1 && listed.stdout.contains(#""service": "gated""#), "\(listed.stderr)")
    }

    @Test func theDeviceStateIsTheDaemonsNeverTheClientsEnvironment() throws {
        let daemon = try DaemonFixture(config: "device-state = unlocked\n")
        try daemon.start()
        let cli = CLIFixture(daemon: daemon)
        let add = ["add", "-s", "wifi", "-a", "home", "--accessible", "whenUnlocked"]
        #expect(try cli.run(as: Self.a, ["--daemon"] + add, stdin: "pw").status == 0)
        #expect(try cli.run(as: Self.a, ["--embedded"] + add, stdin: "pw").status == 0)
        // The daemon's configuration says locked; the client claims unlocked every way it can.
        daemon.stop()
        try "device-state = locked\n".write(toFile: try #require(daemon.configPath), atomically: true, encoding: .utf8)
        try daemon.start()
        let claims: [String: String?] = ["KEYGATE_DEVICE_STATE": "unlocked", "XDG_SESSION_ID": "s1"]
        let get = ["get", "-s", "wifi", "-a", "home"]
        let viaDaemon = try cli.run(as: Self.a, ["--daemon"] + get, environment: claims)
        #expect(viaDaemon.status == 7 && viaDaemon.stdout.isEmpty, "\(viaDaemon.stderr)")
        // Embedded, the same variable decides: locked refuses, unlocked reads.
        #expect(
            try cli.run(as: Self.a, ["--embedded"] + get, environment: ["KEYGATE_DEVICE_STATE": "locked"]).status == 7)
        #expect(try cli.run(as: Self.a, ["--embedded"] + get, environment: claims).stdout == "pw")
    }

    /// git's helper keeps served-credential records beside the proof records, in the client's
    /// `$XDG_RUNTIME_DIR/keygate/`: embedded only. Through the daemon it neither reads nor
    /// creates that directory (it did, whatever the mode), so nothing there changes a `store`.
    @Test func theGitHelperKeepsNoRecordsInTheRuntimeDirectoryThroughTheDaemon() throws {
        let daemon = try DaemonFixture(config: "device-state = unlocked\n")
        try daemon.start()
        let cli = CLIFixture(daemon: daemon)
        let runtime = cli.environment(Self.a)["XDG_RUNTIME_DIR"] ?? ""
        let made = try daemon.run(as: Self.a, "/bin/sh", ["-c", "mkdir -m 700 \"$1\" && echo made", "sh", runtime])
        #expect(made.lines == ["made"], "\(made.output)")
        let credential = "protocol=https\nhost=example.com\nusername=me\npassword=hunter2\n\n"
        for mode in ["--daemon", "--embedded"] {
            let stored = try cli.run(as: Self.a, [mode, "credential", "store"], stdin: credential)
            #expect(stored.status == 0 && stored.stderr.isEmpty, "\(mode): \(stored.stderr)")
            let got = try cli.run(
                as: Self.a, [mode, "credential", "get"], stdin: "protocol=https\nhost=example.com\n\n")
            #expect(got.status == 0 && got.stdout.contains("password=hunter2\n"), "\(mode): \(got.stderr)")
            #expect(got.stderr.isEmpty, "\(mode): \(got.stderr)")
            let again = try cli.run(as: Self.a, [mode, "credential", "store"], stdin: credential)
            #expect(again.status == 0 && again.stderr.isEmpty, "\(mode): \(again.stderr)")
            if mode == "--daemon" {
                #expect(access(runtime + "/keygate", F_OK) != 0, "the daemon-mode helper created \(runtime)/keygate")
            } else {
                // Embedded, the helper does keep them there, so the check above proves something.
                #expect(access(runtime + "/keygate/served-\(Self.a).json", F_OK) == 0)
            }
        }
    }
}
