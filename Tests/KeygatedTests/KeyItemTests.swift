import Foundation
import Glibc
import KeygateItems
import KeygateKeys
import Testing

/// `keygate key` through `keygated` (issue 31, point 3): the keys live in the daemon's store and
/// are used in the daemon; a client gets attributes, public halves and signatures, never a
/// private half; another uid sees none of them. The same commands behave alike embedded.
@Suite struct KeyItemTests {
    static let a = DaemonFixture.userA
    static let b = DaemonFixture.userB

    @Test(arguments: ["--daemon", "--embedded"])
    func keyCommandsBehaveAlikeInBothModes(mode: String) throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        let cli = CLIFixture(daemon: daemon)
        func run(_ words: [String], stdin: String = "") throws -> CLIFixture.Result {
            try cli.run(as: Self.a, [mode, "key"] + words, stdin: stdin)
        }
        let made = try run(["create", "--type", "p256", "--label", "deploy"])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.contains(#""label": "deploy", "type": "p256""#), "\(made.stdout)")
        #expect(try run(["create", "--type", "ed25519", "--label", "git"]).status == 0)
        #expect(try run(["create", "--type", "ed25519", "--label", "git"]).status == 4)
        #expect(try run(["create", "--type", "rsa", "--label", "x"]).status == 2)
        let listed = try run(["list"])
        #expect(listed.status == 0 && listed.lines.count == 2, "\(listed.stdout)\(listed.stderr)")
        let point = try run(["public", "--label", "deploy", "--format", "x963"]).stdoutBytes
        let publicKey = try PublicKey(type: .p256, bytes: point)
        let signed = try run(["sign", "--label", "deploy"], stdin: "a message")
        #expect(signed.status == 0, "\(signed.stderr)")
        #expect(
            publicKey.isValidSignature(
                signed.stdoutBytes, for: Array("a message".utf8), algorithm: .ecdsaSignatureMessageX962SHA256))
        let openSSH = try run(["public", "--label", "git"])
        #expect(openSSH.stdout.hasPrefix("ssh-ed25519 ") && openSSH.stdout.hasSuffix(" git\n"), "\(openSSH.stdout)")
        #expect(try run(["sign", "--label", "nobody"]).status == 3)
        #expect(try run(["delete", "--label", "git"]).status == 0)
        #expect(try run(["list"]).lines.count == 1)
        // The other mode's store has none of these keys, and another uid sees none of them.
        let other = mode == "--daemon" ? "--embedded" : "--daemon"
        #expect(try cli.run(as: Self.a, [other, "key", "list"]).stdout.isEmpty)
        #expect(try cli.run(as: Self.b, [mode, "key", "list"]).stdout.isEmpty)
        #expect(try cli.run(as: Self.b, [mode, "key", "sign", "--label", "deploy"], stdin: "x").status == 3)
    }

    /// Spec 9.5.1 through the daemon: a key whose uses need the passcode signs only after the
    /// daemon's PAM proof, relayed to the client's descriptor; a wrong passphrase signs nothing.
    @Test func aPasscodeKeySignsThroughTheDaemonOnlyAfterItsProof() throws {
        let world = try RelayFixture()
        try world.daemon.start()
        let cli = CLIFixture(daemon: world.daemon, owner: world)
        #expect(
            try cli.run(
                as: Self.a,
                [
                    "--daemon", "key", "create", "--type", "ed25519", "--label", "guarded", "--access-control",
                    "devicePasscode",
                ]
            ).status == 0)
        let refused = try cli.run(
            as: Self.a, ["--daemon", "--passphrase-fd", "3", "key", "sign", "--label", "guarded"], stdin: "m",
            answers: .lines(["wrong"]))
        #expect(refused.status == 5, "\(refused.stderr)")
        #expect(refused.stdoutBytes.isEmpty)
        let signed = try cli.run(
            as: Self.a, ["--daemon", "--passphrase-fd", "3", "key", "sign", "--label", "guarded"], stdin: "m",
            answers: .lines([RelayFixture.passwords[Self.a]!]))
        #expect(signed.status == 0, "\(signed.stderr)")
        #expect(signed.stdoutBytes.count == 64)
    }
}

extension KeyItemTests {
    /// The daemon killed while a signature waits for its proof loses no key: after a restart the
    /// key is listed, the same public key, and signs with the right passphrase.
    @Test func theDaemonKilledMidSignatureLosesNoKey() throws {
        let world = try RelayFixture()
        try world.daemon.start()
        let cli = CLIFixture(daemon: world.daemon, owner: world)
        let made = try cli.run(
            as: Self.a,
            ["--daemon", "key", "create", "--type", "p256", "--label", "kept", "--access-control", "devicePasscode"])
        try #require(made.status == 0, "\(made.stderr)")
        let before = try cli.run(as: Self.a, ["--daemon", "key", "public", "--label", "kept"]).stdout
        // A signature whose prompt is never answered (a FIFO nobody writes), in the background.
        let fifo = world.daemon.directory + "/silence-\(UUID().uuidString)"
        #expect(mkfifo(fifo, 0o666) == 0)
        chmod(fifo, 0o666)
        let output = world.daemon.directory + "/signing-\(UUID().uuidString).out"
        let environment = cli.environment(Self.a)
        let signing = try DaemonFixture.launch(
            "/bin/sh",
            [
                "-c",
                "exec /usr/bin/setpriv --reuid=\(Self.a) --regid=\(Self.a) --clear-groups "
                    + "\(CLIFixture.keygatePath) --daemon --passphrase-fd 3 key sign --label kept 3<>'\(fifo)' </dev/null",
            ], output: output, environment: environment)
        let background = RelayFixture.Background(process: signing, outputPath: output)
        // Time for the request to reach its PAM prompt (it then waits for ever).
        usleep(1_500_000)
        #expect(signing.isRunning, "the signature is waiting for its proof")
        world.daemon.stop(signal: SIGKILL)
        #expect(background.finish(timeout: 15) != 0, "the signature did not succeed")
        try world.daemon.start()
        let listed = try cli.run(as: Self.a, ["--daemon", "key", "list"])
        #expect(listed.lines.count == 1 && listed.stdout.contains(#""label": "kept""#), "\(listed.stdout)")
        #expect(try cli.run(as: Self.a, ["--daemon", "key", "public", "--label", "kept"]).stdout == before)
        let signed = try cli.run(
            as: Self.a, ["--daemon", "--passphrase-fd", "3", "key", "sign", "--label", "kept"], stdin: "m",
            answers: .lines([RelayFixture.passwords[Self.a]!]))
        #expect(signed.status == 0, "\(signed.stderr)")
        let publicKey = try PublicKey(
            type: .p256,
            bytes: try cli.run(as: Self.a, ["--daemon", "key", "public", "--label", "kept", "--format", "x963"])
                .stdoutBytes)
        #expect(
            publicKey.isValidSignature(
                signed.stdoutBytes, for: Array("m".utf8), algorithm: .ecdsaSignatureMessageX962SHA256))
    }
}
