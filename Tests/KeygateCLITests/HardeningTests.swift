import Foundation
import KeygateTesting
import Testing

/// Issue 9 ("Hardening"), the command line's part: each test replays the scenario the issue
/// reported and checks the behaviour asked for.
@Suite struct HardeningTests {
    // MARK: - Point 15: empty flag lists

    /// `--access-control " "` and `--access-control ""` used to mean "no flags", and an
    /// empty `--bound-enrollment` bound the item to the set {""}; all are `errSecParam` now.
    @Test(arguments: [
        ["--access-control", ""], ["--access-control", " "], ["--access-control", "\t"],
        ["--access-control", "biometryCurrentSet", "--bound-enrollment", ""],
        ["--access-control", "biometryCurrentSet", "--bound-enrollment", " "],
        ["--access-control", "biometryCurrentSet", "--bound-enrollment", "f1,"],
    ])
    func emptyListsAreRefusedByEvaluate(_ extra: [String]) throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("ctx.json", contents: "{}")
        let result = try KeygateBinary.run(["evaluate", "--context", path] + extra)
        #expect(result.status == 8, "\(extra): \(result.stdoutText)")
        #expect(result.lastErrorLine.hasPrefix("keygate: "))
        #expect(result.lastErrorLine.hasSuffix("(errSecParam -50)"))
        #expect(result.stdout.isEmpty)
    }

    @Test func emptyFlagListsAreRefusedByAddAndNothingIsAdded() throws {
        let world = try CLIWorld()
        for flags in ["", " "] {
            let result = try world.add("api", "me", Data("v".utf8), ["--access-control", flags])
            #expect(result.status == 8)
            #expect(result.lastErrorLine.contains("empty access-control flag"))
        }
        #expect(try world.run(["list"]).stdout.isEmpty)
    }

    // MARK: - Point 1: a missing or empty enrollment source is "biometry unavailable"

    /// The accounts `keygate list` shows.
    static func listedAccounts(_ world: CLIWorld) throws -> [String] {
        let result = try world.run(["list"])
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdoutText.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: #""account": ""#) else { return nil }
            return String(line[range.upperBound...].prefix { $0 != "\"" })
        }.sorted()
    }

    /// Before, `KEYGATE_ENROLLMENT_FILE` naming a missing or empty file made a plain `list`
    /// treat biometry as "present, nothing enrolled" and remove every `biometryCurrentSet`
    /// item for good. Now such a source means biometry unavailable: the item stays, is
    /// refused (not "not found") while the source is unusable, and reads again once the
    /// original file is back. Only a readable, non-empty, different set invalidates it.
    @Test func unusableEnrollmentFileNeverDeletesItems() throws {
        let world = try CLIWorld()
        try world.pam.matrixService("keygate-biometry", user: PAMWorld.currentUser(), password: "touch")
        let enrolled = try world.directory.file("enrolled", contents: "f1\nf2\n")
        world.extraEnvironment["KEYGATE_ENROLLMENT_FILE"] = enrolled
        #expect(
            try world.add("api", "finger", Data("bio".utf8), ["--access-control", "biometryCurrentSet"]).status == 0)
        #expect(try world.add("api", "plain", Data("p".utf8)).status == 0)
        #expect(try world.add("api", "presence", Data("u".utf8), ["--access-control", "userPresence"]).status == 0)

        let fifo = world.directory.url.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let unusable = [
            world.directory.url.appendingPathComponent("missing").path,
            try world.directory.file("empty", contents: ""),
            try world.directory.file("blank", contents: "\n  \n# no template yet\n"),
            world.directory.url.appendingPathComponent("directory").path,
            world.directory.url.appendingPathComponent("not-utf8").path,
            fifo,
        ]
        try FileManager.default.createDirectory(atPath: unusable[3], withIntermediateDirectories: true)
        try Data([0x66, 0x31, 0xff, 0x0a]).write(to: URL(fileURLWithPath: unusable[4]))
        for source in unusable {
            world.extraEnvironment["KEYGATE_ENROLLMENT_FILE"] = source
            #expect(try Self.listedAccounts(world) == ["finger", "plain", "presence"], "\(source)")
            let list = try world.run(["list"])
            #expect(list.stderr.contains("biometry is unavailable"), "\(list.stderr)")
            let read = try world.run(["get", "--service", "api", "--account", "finger"], passphrase: "touch")
            #expect(read.status == 5, "refused for lack of biometry, not gone: \(read.stderr)")
            let fallback = try world.run(["get", "--service", "api", "--account", "presence"], passphrase: "s3cret")
            #expect(fallback.stdout == Data("u".utf8), "userPresence falls back to the passcode: \(fallback.stderr)")
        }

        world.extraEnvironment["KEYGATE_ENROLLMENT_FILE"] = enrolled
        let read = try world.run(["get", "--service", "api", "--account", "finger"], passphrase: "touch")
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout == Data("bio".utf8))

        // Positive evidence still invalidates: a readable, non-empty, different set.
        world.extraEnvironment["KEYGATE_ENROLLMENT_FILE"] = try world.directory.file("changed", contents: "f1\n")
        #expect(try Self.listedAccounts(world) == ["plain", "presence"])
    }

    /// The reviewers' reproduction: an enrollment file that another user may write (here
    /// `nobody`'s, mode 0666, rewritten with another set), or a symbolic link to another set, is
    /// not trusted: biometry is unavailable, the `biometryCurrentSet` item is refused, not
    /// deleted, and reads again once the trusted file is back.
    @Test func anEnrollmentFileOthersCanWriteNeverDeletesItems() throws {
        let world = try CLIWorld()
        try world.pam.matrixService("keygate-biometry", user: PAMWorld.currentUser(), password: "touch")
        let enrolled = try world.directory.file("enrolled", contents: "f1\n")
        #expect(chmod(enrolled, 0o644) == 0)
        world.extraEnvironment["KEYGATE_ENROLLMENT_FILE"] = enrolled
        #expect(
            try world.add("api", "finger", Data("bio".utf8), ["--access-control", "biometryCurrentSet"]).status == 0)

        try "f2\n".write(toFile: enrolled, atomically: false, encoding: .utf8)
        #expect(chown(enrolled, 65534, 0) == 0 && chmod(enrolled, 0o666) == 0)
        let changed = try world.directory.file("changed", contents: "f2\n")
        let link = world.directory.url.appendingPathComponent("link").path
        #expect(symlink(changed, link) == 0)
        for source in [enrolled, link] {
            world.extraEnvironment["KEYGATE_ENROLLMENT_FILE"] = source
            let read = try world.run(["get", "--service", "api", "--account", "finger"], passphrase: "touch")
            #expect(read.status == 5, "refused for lack of biometry, not gone: \(read.stderr)")
            #expect(read.stderr.contains("the enrollment file \(source)"), "\(read.stderr)")
            #expect(try Self.listedAccounts(world) == ["finger"], "\(source)")
        }

        try "f1\n".write(toFile: enrolled, atomically: false, encoding: .utf8)
        #expect(chown(enrolled, getuid(), getgid()) == 0 && chmod(enrolled, 0o644) == 0)
        world.extraEnvironment["KEYGATE_ENROLLMENT_FILE"] = enrolled
        let read = try world.run(["get", "--service", "api", "--account", "finger"], passphrase: "touch")
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout == Data("bio".utf8))
    }

    /// The same rule for fprintd, now asked over D-Bus in process: a bus without fprintd is
    /// biometry unavailable, never a change of the enrolled set, and no `fprintd-list` is run
    /// any more (one on `PATH` that would print another set, and leave a mark, is ignored).
    /// The D-Bus answers themselves (errors, silence, nothing enrolled) are
    /// `FprintdEnrollmentTests` in KeygateLinuxTests.
    @Test func anUnreachableFprintdNeverDeletesItemsAndNoSubprocessIsRun() throws {
        let world = try CLIWorld()
        let bin = world.directory.url.appendingPathComponent("bin").path
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let mark = bin + "/ran"
        let script = bin + "/fprintd-list"
        let user = PAMWorld.currentUser()
        try """
        #!/bin/sh
        touch '\(mark)'
        printf 'Fingerprints for user \(user) on Test Reader (press):\n - #0: left-thumb\n'
        """.write(toFile: script, atomically: true, encoding: .utf8)
        #expect(chmod(script, 0o755) == 0)
        world.extraEnvironment["PATH"] = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        world.extraEnvironment["KEYGATE_ENROLLMENT_FILE"] = try world.directory.file(
            "enrolled", contents: "Test Reader (press):/right-index-finger\n")
        #expect(
            try world.add("api", "finger", Data("bio".utf8), ["--access-control", "biometryCurrentSet"]).status == 0)

        world.extraEnvironment["KEYGATE_ENROLLMENT_FILE"] = nil
        for address in ["unix:path=/nonexistent/keygate-bus", "unix:path=\(world.directory.url.path)/no-bus"] {
            world.extraEnvironment["DBUS_SYSTEM_BUS_ADDRESS"] = address
            #expect(try Self.listedAccounts(world) == ["finger"], "\(address)")
            let read = try world.run(["get", "--service", "api", "--account", "finger"], passphrase: "touch")
            #expect(read.status == 5, "refused for lack of biometry, not gone: \(read.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: mark), "fprintd-list was run")
    }

    // MARK: - Point 11: messages that echo input stay one line

    /// The shape every failure's last standard-error line keeps.
    static func isOneLineFailure(_ result: KeygateBinary.Result) -> Bool {
        let last = result.lastErrorLine
        return last.hasPrefix("keygate: ") && last.hasSuffix(")") && last.contains(" (errSec")
            && !last.unicodeScalars.contains { $0.value < 0x20 || (0x7f...0x9f).contains($0.value) }
    }

    /// Before, an argument with a newline split the last stderr line in two (and an ESC
    /// reached the terminal). Now control characters are shown escaped in every message.
    @Test func controlCharactersInArgumentsAreEscaped() throws {
        let world = try CLIWorld()
        let hostile = "evil\nkeygate: fake (errSecSuccess 0)\r\t\u{1b}[31m\u{7f}\u{85}end"
        let escaped = #"evil\nkeygate: fake (errSecSuccess 0)\r\t\u{1b}[31m\u{7f}\u{85}end"#
        let runs: [(KeygateBinary.Result, Int32)] = [
            (try world.run(["get", "--service", hostile, "--account", "me"]), 3),
            (try world.run([hostile]), 2),
            (try world.run(["list", "--" + hostile]), 2),
            (try world.run(["evaluate", "--context", "/nonexistent/" + hostile]), 2),
            (try world.run(["evaluate", "--context", "/dev/null", "--access-control", hostile]), 8),
            (try world.add("api", "me", Data(), ["--accessible", hostile]), 8),
        ]
        for (result, status) in runs {
            #expect(result.status == status, "\(result.stderr)")
            #expect(Self.isOneLineFailure(result), "\(result.stderr)")
            #expect(result.lastErrorLine.contains(escaped), "\(result.lastErrorLine)")
            #expect(!result.stderr.contains("\u{1b}"), "no raw ESC reaches the terminal")
        }
    }

    // MARK: - Point 12: only keygate… PAM services

    /// Before, `--pam-service permissive` let any caller (root included) satisfy a protected
    /// read through a service such as one with `pam_permit` or `pam_rootok`, with no password.
    /// Now any name not starting with `keygate` is a usage error before any PAM call.
    @Test func pamServicesOutsideKeygateAreRefused() throws {
        let world = try CLIWorld()
        try world.pam.service("permissive", "auth sufficient pam_permit.so\naccount sufficient pam_permit.so\n")
        try world.pam.service("keygate-permissive", "auth sufficient pam_permit.so\naccount sufficient pam_permit.so\n")
        #expect(try world.add("bank", "me", Data("t".utf8), ["--access-control", "devicePasscode"]).status == 0)
        let get = ["get", "--service", "bank", "--account", "me"]
        for option in ["--pam-service", "--pam-biometry-service"] {
            for name in ["permissive", "login", "sudo", "Keygate", "keygate/../permissive", "keygateX", "xkeygate", ""]
            {
                let result = try world.run([option, name] + get, passphrase: "anything")
                #expect(result.status == 2, "\(option) \(name): \(result.stderr)")
                #expect(result.stdout.isEmpty)
                #expect(result.lastErrorLine.hasPrefix("keygate: \(option) '"))
                #expect(
                    result.lastErrorLine.hasSuffix(
                        "is not allowed: only PAM services named keygate… "
                            + "(lowercase letters, digits, '-', '_', '.') can be used (errSecParam -50)"))
            }
            let prove = try world.run([option, "permissive", "prove"], passphrase: "anything")
            #expect(prove.status == 2)
            #expect(prove.stdout.isEmpty)
        }
        // A keygate… service is the administrator's to configure, and it is used.
        let allowed = try world.run(["--pam-service", "keygate-permissive"] + get, passphrase: "anything")
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(allowed.stdout == Data("t".utf8))
        #expect(try world.run(get, passphrase: "wrong").status == 5, "the default service still checks")
    }

    // MARK: - Point 8: names are valid UTF-8, compared byte for byte

    /// Runs keygate through `/bin/sh`, so `printf` can put raw bytes into an argument.
    static func runRaw(_ world: CLIWorld, _ script: String, stdin: Data = Data()) throws -> KeygateBinary.Result {
        try KeygateBinary.run(
            ["-c", script, KeygateBinary.url.path], stdin: stdin, environment: world.environment,
            executable: URL(fileURLWithPath: "/bin/sh"))
    }

    /// Before, `--account $'a\xff'` and `--account $'a\xfe'` both became `a\u{FFFD}` and named
    /// one item (the second add was a duplicate, a get returned the other's value). Now any
    /// argument that is not valid UTF-8 is a usage error naming its option, and nothing changes.
    @Test func invalidUTF8InNamesIsRefused() throws {
        let world = try CLIWorld()
        let cases: [(String, String)] = [
            (#""$0" add --service api --account "$(printf 'a\377')""#, "the value after '--account'"),
            (#""$0" add --service api --account "$(printf 'a\376')""#, "the value after '--account'"),
            (#""$0" add --service "$(printf 'api\300')" --account me"#, "the value after '--service'"),
            (#""$0" add --service api --account me --label "$(printf '\355\240\200')""#, "the value after '--label'"),
            (
                #""$0" add --service api --account me "--access-group=$(printf 'g\377')""#,
                "the value of '--access-group'"
            ),
            (#""$0" get --service api --account "$(printf 'a\377')""#, "the value after '--account'"),
            (#""$0" --store "$(printf '/tmp/\377')" list"#, "the value after '--store'"),
            (#""$0" "$(printf 'li\377st')""#, "an argument"),
        ]
        for (script, named) in cases {
            let result = try Self.runRaw(world, script)
            #expect(result.status == 2, "\(script): \(result.stderr)")
            #expect(result.lastErrorLine.hasPrefix("keygate: \(named) is not valid UTF-8: "), "\(result.lastErrorLine)")
            #expect(result.lastErrorLine.hasSuffix("(errSecParam -50)"))
        }
        #expect(try world.run(["list"]).stdout.isEmpty, "nothing was added")
        // Valid UTF-8 through the same path still works.
        #expect(try Self.runRaw(world, #""$0" add --service api --account "$(printf 'a\303\251')""#).status == 0)
        #expect(try Self.listedAccounts(world) == [#"a\u00e9"#])
    }

    /// Keygate's choice ("Apple behaviour and our choices"): names are kept as given, never normalised, so the NFC and
    /// NFD forms of a name are two items, as on Apple; `list` escapes non-ASCII characters
    /// so the two entries look different, and each form reads its own value.
    @Test func nfcAndNfdNamesAreTwoVisiblyDifferentItems() throws {
        let world = try CLIWorld()
        let nfc = "Jos\u{E9}"
        let nfd = "Jose\u{301}"
        #expect(try world.add("api", nfc, Data("composed".utf8)).status == 0)
        #expect(try world.add("api", nfd, Data("decomposed".utf8)).status == 0)
        #expect(try Self.listedAccounts(world) == [#"Jos\u00e9"#, #"Jose\u0301"#])
        var result = try world.run(["get", "--service", "api", "--account", nfc])
        #expect(result.stdout == Data("composed".utf8))
        result = try world.run(["get", "--service", "api", "--account", nfd])
        #expect(result.stdout == Data("decomposed".utf8))
        result = try world.run(["list", "--account", nfd])
        #expect(result.stdoutText.split(separator: "\n").count == 1)
        #expect(try world.run(["delete", "--service", "api", "--account", nfc]).status == 0)
        #expect(try Self.listedAccounts(world) == [#"Jose\u0301"#])
    }
}
