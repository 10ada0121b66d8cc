import Foundation
import KeygateTesting
import Synchronization
import Testing

/// The item commands end to end: the built binary, a private store, pam_wrapper for proofs.
@Suite struct ItemCommandTests {
    static let binary = Data([0x00, 0x01, 0xff, 0xfe, 0x0a, 0x0d, 0xc3, 0x28, 0x00, 0x7f]) + Data("tail".utf8)

    @Test func binaryValuesRoundTripByteForByte() throws {
        let world = try CLIWorld()
        #expect(try world.add("api", "me", Self.binary).status == 0)
        let got = try world.run(["get", "--service", "api", "--account", "me"])
        #expect(got.status == 0)
        #expect(got.stdout == Self.binary, "NUL, invalid UTF-8 and newlines survive exactly")
        #expect(try world.run(["update", "--service", "api", "--account", "me"], stdin: Data()).status == 0)
        #expect(try world.run(["get", "--service", "api", "--account", "me"]).stdout == Data())
    }

    @Test func exitCodesFollowTheContract() throws {
        let world = try CLIWorld()
        #expect(try world.add("api", "me", Data("v".utf8)).status == 0)
        // 4: duplicate
        var result = try world.add("api", "me", Data("w".utf8))
        #expect(result.status == 4)
        #expect(result.lastErrorLine.hasSuffix("(errSecDuplicateItem -25299)"))
        // 3: not found
        result = try world.run(["get", "--service", "api", "--account", "nobody"])
        #expect(result.status == 3)
        #expect(result.lastErrorLine.hasSuffix("(errSecItemNotFound -25300)"))
        // 7: locked, not "not found"
        world.extraEnvironment["KEYGATE_DEVICE_STATE"] = "locked"
        result = try world.run(["get", "--service", "api", "--account", "me"])
        #expect(result.status == 7)
        #expect(result.lastErrorLine.contains("the device is locked"))
        world.extraEnvironment["KEYGATE_DEVICE_STATE"] = nil
        #expect(try world.run(["--device-state", "locked", "get", "--service", "api", "--account", "me"]).status == 7)
        #expect(try world.run(["--device-state", "sideways", "list"]).status == 2)
        #expect(try world.run(["--device-state", "sideways", "audit", "show"]).status == 2)
        // 8: bad flags and classes, naming the word
        result = try world.add("s", "a", Data(), ["--access-control", "biometryAny,fingerprint"])
        #expect(result.status == 8)
        #expect(result.lastErrorLine.contains("'fingerprint'") && result.lastErrorLine.hasSuffix("(errSecParam -50)"))
        result = try world.add("s", "a", Data(), ["--accessible", "whenever"])
        #expect(result.status == 8)
        #expect(result.lastErrorLine.contains("'whenever'"))
        // 2: usage
        #expect(try world.run(["get", "--service", "api"]).status == 2)
        #expect(try world.run(["get", "--service", "api", "--account", "me", "--colour"]).status == 2)
        // 5, 6: wrong and missing passphrase for a protected item; 0 with the right one
        #expect(try world.add("bank", "me", Data("t".utf8), ["--access-control", "devicePasscode"]).status == 0)
        result = try world.run(["get", "--service", "bank", "--account", "me"], passphrase: "wrong")
        #expect(result.status == 5)
        #expect(result.lastErrorLine.hasSuffix("(errSecAuthFailed -25293)"))
        result = try world.run(["get", "--service", "bank", "--account", "me"], passphrase: "")
        #expect(result.status == 5, "an empty passphrase is a wrong one")
        result = try KeygateBinary.run(
            ["--passphrase-fd", "3", "get", "--service", "bank", "--account", "me"], environment: world.environment,
            descriptor3: Data())
        #expect(result.status == 6, "a missing passphrase is a cancel: \(result.stderr)")
        result = try world.run(["get", "--service", "bank", "--account", "me"], passphrase: "s3cret")
        #expect(result.status == 0)
        #expect(result.stdout == Data("t".utf8))
        // 7: no terminal and no descriptor, or --no-interaction: never hangs
        #expect(try world.run(["get", "--service", "bank", "--account", "me"]).status == 7)
        #expect(
            try world.run(["--no-interaction", "get", "--service", "bank", "--account", "me"], passphrase: "s3cret")
                .status == 7)
        // 3 again after delete; delete needs no proof
        #expect(try world.run(["delete", "--service", "bank", "--account", "me"]).status == 0)
        #expect(try world.run(["delete", "--service", "bank", "--account", "me"]).status == 3)
    }

    @Test func listPrintsAttributesNeverValues() throws {
        let world = try CLIWorld()
        #expect(try world.add("api", "alice", Data("value-one-xyz".utf8), ["--label", "Alice"]).status == 0)
        #expect(
            try world.add("api", "bob", Data("value-two-xyz".utf8), ["--access-control", "userPresence"]).status == 0)
        #expect(try world.add("other", "carol", Data("value-three-xyz".utf8)).status == 0)
        let result = try world.run(["list", "--service", "api"])
        #expect(result.status == 0)
        let lines = result.stdoutText.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines[0].contains("\"account\": \"alice\"") && lines[0].contains("\"label\": \"Alice\""))
        #expect(lines[1].contains("\"accessControl\": \"userPresence\""))
        #expect(!result.stdoutText.contains("value-"))
        #expect(try world.run(["list"]).stdoutText.split(separator: "\n").count == 3)
        #expect(try world.run(["list", "--account", "nobody"]).stdoutText.isEmpty)
    }

    @Test func proofsAreReusedWithinTheWindowOnly() throws {
        let world = try CLIWorld()
        #expect(try world.add("bank", "me", Data("t".utf8), ["--access-control", "devicePasscode"]).status == 0)
        let read = ["--reuse-seconds", "2", "get", "--service", "bank", "--account", "me"]
        #expect(try world.run(read, passphrase: "s3cret").status == 0)
        #expect(try world.run(read).status == 0, "reused across invocations within 2 s")
        #expect(try world.run(["get", "--service", "bank", "--account", "me"]).status == 7, "no reuse by default")
        Thread.sleep(forTimeInterval: 3.1)
        #expect(try world.run(read).status == 7, "past the window it must be asked again")
        #expect(try world.run(read, passphrase: "s3cret").status == 0)
        #expect(try world.run(["lock"]).status == 0)
        #expect(try world.run(read).status == 7, "keygate lock forgets the proofs")
        // Another login session does not see the proof.
        #expect(try world.run(read, passphrase: "s3cret").status == 0)
        world.extraEnvironment["XDG_SESSION_ID"] = "another-session"
        #expect(try world.run(read).status == 7)
    }

    @Test func failuresLockOutAcrossInvocationsAndCommands() throws {
        let world = try CLIWorld()
        #expect(try world.add("bank", "me", Data("t".utf8), ["--access-control", "devicePasscode"]).status == 0)
        let read = ["get", "--service", "bank", "--account", "me"]
        let environment = world.environment
        // Five wrong passphrases at once, from separate processes. pam_wrapper makes a directory
        // per process in /tmp, and processes started together can race for one: such a run ends
        // before PAM asks (status 1, nothing counted), so it is made again, alone. Every run that
        // did reach PAM failed (status 5) and must have been counted: five of them lock out.
        let statuses = Mutex<[Int32]>([])
        DispatchQueue.concurrentPerform(iterations: 5) { _ in
            let status =
                (try? KeygateBinary.run(
                    ["--passphrase-fd", "3"] + read, environment: environment, descriptor3: Data("wrong\n".utf8)))?
                .status
            statuses.withLock { $0.append(status ?? -1) }
        }
        let counted = statuses.withLock { $0 }.filter { $0 == 5 }.count
        for _ in counted..<5 {
            let again = try KeygateBinary.run(
                ["--passphrase-fd", "3"] + read, environment: environment, descriptor3: Data("wrong\n".utf8))
            #expect(again.status == 5, "\(again.stderr)")
        }
        var result = try world.run(read, passphrase: "s3cret")
        #expect(
            result.status == 5,
            "the right passphrase is refused during the lockout (the five ran as \(statuses.withLock { $0 }))")
        #expect(result.lastErrorLine.contains("locked out"))
        // Another store, or `prove`, does not escape it.
        let other = world.directory.url.appendingPathComponent("other.db").path
        result = try world.run(["--store", other, "prove"], passphrase: "s3cret")
        #expect(result.status == 5)
        #expect(result.lastErrorLine.contains("locked out"))
    }

    @Test func aCorruptDatabaseIsReportedAndLeftUntouched() throws {
        let world = try CLIWorld()
        try FileManager.default.createDirectory(atPath: world.data + "/keygate", withIntermediateDirectories: true)
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: world.store))
        chmod(world.store, 0o600)
        let result = try world.run(["list"])
        #expect(result.status == 1)
        #expect(result.lastErrorLine.contains(world.store) && result.lastErrorLine.contains("not a Keygate database"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: world.store)) == garbage)
        #expect(try world.add("api", "me", Data("v".utf8)).status == 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: world.store)) == garbage)
    }

    @Test func policyDirectories() throws {
        let world = try CLIWorld()
        let empty = world.directory.url.appendingPathComponent("policies").path
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        #expect(try world.run(["--policies", empty, "list"]).status == 0)
        #expect(try world.run(["--policies", empty + "/missing", "list"]).status == 0)
        try "rule".write(toFile: empty + "/org.policy", atomically: true, encoding: .utf8)
        let result = try world.run(["--policies", empty, "list"])
        #expect(result.status == 2, "a broken policy file is refused, never ignored")
        #expect(result.lastErrorLine.contains("org.policy:1:5"))
    }

    @Test func exportAndImport() throws {
        let world = try CLIWorld()
        #expect(try world.add("api", "plain", Data("p".utf8)).status == 0)
        #expect(
            try world.add("api", "local", Data("l".utf8), ["--accessible", "whenUnlockedThisDeviceOnly"]).status == 0)
        let backup = world.directory.url.appendingPathComponent("backup.kg").path
        var result = try KeygateBinary.run(
            ["export", "--to", backup, "--backup-passphrase-fd", "3"], environment: world.environment,
            descriptor3: Data("backup-pw\n".utf8))
        #expect(result.status == 0, "\(result.stderr)")
        result = try KeygateBinary.run(
            ["export", "--to", backup, "--backup-passphrase-fd", "3"], environment: world.environment,
            descriptor3: Data("backup-pw\n".utf8))
        #expect(result.status == 1, "an existing file is never overwritten")
        let other = try CLIWorld()
        result = try KeygateBinary.run(
            ["import", backup, "--backup-passphrase-fd", "3"], environment: other.environment,
            descriptor3: Data("wrong\n".utf8))
        #expect(result.status == 9)
        result = try KeygateBinary.run(
            ["import", backup, "--backup-passphrase-fd", "3"], environment: other.environment,
            descriptor3: Data("backup-pw\n".utf8))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try other.run(["get", "--service", "api", "--account", "plain"]).stdout == Data("p".utf8))
        #expect(
            try other.run(["get", "--service", "api", "--account", "local"]).status == 3,
            "ThisDeviceOnly never migrates")
        result = try KeygateBinary.run(
            ["import", backup, "--backup-passphrase-fd", "3"], environment: other.environment,
            descriptor3: Data("backup-pw\n".utf8))
        #expect(result.status == 4, "importing twice collides and imports nothing")
    }

    @Test func auditShowAndVerify() throws {
        let world = try CLIWorld()
        #expect(try world.add("api", "me", Data("top-secret-audit-value".utf8)).status == 0)
        #expect(try world.run(["get", "--service", "api", "--account", "me"]).status == 0)
        var result = try world.run(["audit", "verify"])
        #expect(result.status == 0)
        #expect(result.stdoutText.contains("intact"))
        result = try world.run(["audit", "show"])
        #expect(result.stdoutText.split(separator: "\n").count >= 2)
        #expect(!result.stdoutText.contains("top-secret-audit-value"))
        // Edit the first record: verify names sequence 1.
        var lines = try String(contentsOfFile: world.audit, encoding: .utf8).split(separator: "\n").map(String.init)
        lines[0] = lines[0].replacingOccurrences(of: "\"allow\"", with: "\"deny\"")
        try (lines.joined(separator: "\n") + "\n").write(toFile: world.audit, atomically: false, encoding: .utf8)
        result = try world.run(["audit", "verify"])
        #expect(result.status == 9)
        #expect(result.lastErrorLine.contains("broken at sequence 1"))
        // A trail whose end was changed is not extended: required auditing refuses to go on.
        lines = try String(contentsOfFile: world.audit, encoding: .utf8).split(separator: "\n").map(String.init)
        lines[lines.count - 1] = lines[lines.count - 1].replacingOccurrences(of: "\"me\"", with: "\"someone\"")
        try (lines.joined(separator: "\n") + "\n").write(toFile: world.audit, atomically: false, encoding: .utf8)
        result = try world.run(["get", "--service", "api", "--account", "me"])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty, "the value is not released when its read cannot be audited")
        #expect(result.lastErrorLine.contains("audit record could not be written"))
    }

    @Test func demoRunsEveryStep() throws {
        let result = try KeygateBinary.run(["demo"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stdoutText.contains("  NO"))
        #expect(result.stdoutText.contains("errSecInteractionNotAllowed"))
        #expect(result.stdoutText.contains("errSecDecode"))
    }
}
