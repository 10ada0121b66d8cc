import Foundation
import Keygate
import KeygateLinux
import KeygatePAM
import KeygatePolicy
import KeygateStore
import KeygateTesting
import Testing

/// The one-call setup as an app uses it: its own store and trail, PAM through pam_wrapper,
/// the user's shared failure ledger, askpass, and no hang without anyone to ask.
@Suite struct StandardKeychainTests {
    /// A home of its own per test: XDG directories under a temporary directory.
    final class Home {
        let directory: String
        init() throws {
            directory =
                FileManager.default.temporaryDirectory.appendingPathComponent(
                    "keygate-linux-\(UUID().uuidString)"
                ).path
            try FileManager.default.createDirectory(
                atPath: directory + "/run", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        var environment: [String: String] {
            [
                "XDG_DATA_HOME": directory + "/data", "XDG_RUNTIME_DIR": directory + "/run", "HOME": directory,
                "PATH": "/nonexistent",
            ]
        }
        deinit { try? FileManager.default.removeItem(atPath: directory) }
    }

    static func keychain(
        _ application: String, home: Home, source: (any PassphraseSource)?, interactive: Bool = true
    ) throws -> Keychain {
        let world = try PAMFixture.load()
        return try Keychain.standard(
            application: application, passphraseSource: source, interactive: interactive, deviceMode: .unlocked,
            pam: PAMAuthenticator.Configuration(
                passcodeService: "kg-passcode", biometryService: "kg-biometry", failureDelay: .zero,
                library: world.library),
            environment: home.environment)
    }

    @Test func anAppStoresAUserPresenceTokenAndReadsItBackThroughPAM() async throws {
        let home = try Home()
        let source = ProgrammaticPassphraseSource(passphrase: PAMFixture.passcode)
        let keychain = try Self.keychain("com.example.app", home: home, source: source)
        let presence = try AccessControl(protection: .whenUnlockedThisDeviceOnly, flags: .userPresence)
        let tokens = CredentialStore(keychain: keychain, service: "api", accessControl: presence)
        try await tokens.save(SecretData("t0k3n"), account: "me")
        let value = try #require(try await tokens.read(account: "me", prompt: "Sign in again"))
        #expect(value == SecretData("t0k3n"))
        #expect(source.prompts.count == 1, "one passcode prompt (no sensor here) for the read")
        #expect(source.prompts.first?.reason == "Sign in again")
        // Its own store and trail, in its own directory.
        let directory = home.directory + "/data/com.example.app"
        #expect(FileManager.default.fileExists(atPath: directory + "/items.db"))
        let trail = try String(contentsOfFile: directory + "/audit.jsonl", encoding: .utf8)
        let lines = trail.split(separator: "\n")
        #expect(!lines.isEmpty)
        #expect(lines.allSatisfy { $0.contains("\"pid\": \(getpid()),") && $0.contains("\"uid\": \(geteuid()),") })
        let executable = try #require(CurrentProcess.executable)
        #expect(lines.allSatisfy { $0.contains("\"exe\": \"\(executable)\"") }, "every record names the program")
        #expect(lines.contains { $0.contains("\"accessGroup\": \"com.example.app\"") })
        #expect(!trail.contains("t0k3n") && !trail.contains(PAMFixture.passcode))
        // Another application has its own store: it does not see the token.
        let other = try Self.keychain("org.example.other", home: home, source: source)
        #expect(try await CredentialStore(keychain: other, service: "api").read(account: "me") == nil)
    }

    @Test func theFailureLedgerIsTheUsersAcrossApplications() async throws {
        let home = try Home()
        let wrong = ProgrammaticPassphraseSource(passphrase: "wrong")
        let first = try Self.keychain("com.example.one", home: home, source: wrong)
        let control = try AccessControl(protection: .whenUnlocked, flags: .devicePasscode)
        try await first.add(AddRequest(service: "s", account: "a", accessControl: control, data: SecretData("v")))
        for _ in 0..<5 {
            await #expect(throws: KeygateError(.authFailed, "")) {
                _ = try await first.copyMatching(ItemQuery(service: "s", account: "a", returnData: true))
            }
        }
        // Another application, the right passcode: still locked out, and PAM is not asked.
        let right = ProgrammaticPassphraseSource(passphrase: PAMFixture.passcode)
        let second = try Self.keychain("com.example.two", home: home, source: right)
        try await second.add(AddRequest(service: "s", account: "a", accessControl: control, data: SecretData("v")))
        await #expect(throws: KeygateError(.authFailed, "")) {
            _ = try await second.copyMatching(ItemQuery(service: "s", account: "a", returnData: true))
        }
        #expect(right.prompts.isEmpty)
        #expect(FileManager.default.fileExists(atPath: home.directory + "/data/keygate/attempts-\(geteuid()).json"))
    }

    /// Issue 13 point 3: a wrong passcode through PAM fails the read with errSecAuthFailed whose
    /// cause is PAM's own status (PAM_AUTH_ERR), which a caller can match.
    @Test func aPAMFailureKeepsItsStatusAsTheErrorsCause() async throws {
        let home = try Home()
        let keychain = try Self.keychain(
            "com.example.cause", home: home, source: ProgrammaticPassphraseSource(passphrase: "wrong"))
        let control = try AccessControl(protection: .whenUnlocked, flags: .devicePasscode)
        try await keychain.add(AddRequest(service: "s", account: "a", accessControl: control, data: SecretData("v")))
        do throws(KeygateError) {
            _ = try await keychain.copyMatching(ItemQuery(service: "s", account: "a", returnData: true))
            Issue.record("a wrong passcode must fail")
        } catch {
            #expect(error.status == .authFailed)
            #expect(error.cause == .pam(PAMStatus.authError.rawValue))
        }
    }

    @Test func withNobodyToAskAProtectedReadFailsAtOnce() async throws {
        let home = try Home()
        let keychain = try Self.keychain("com.example.batch", home: home, source: nil, interactive: false)
        let control = try AccessControl(protection: .whenUnlocked, flags: .devicePasscode)
        try await keychain.add(AddRequest(service: "s", account: "a", accessControl: control, data: SecretData("v")))
        await #expect(throws: KeygateError(.interactionNotAllowed, "")) {
            _ = try await keychain.copyMatching(ItemQuery(service: "s", account: "a", returnData: true))
        }
    }

    @Test func anAskpassProgramAnswersAndADismissedDialogCancels() async throws {
        let home = try Home()
        let answer = home.directory + "/askpass-ok"
        try "#!/bin/sh\nprintf '%s\\n' '\(PAMFixture.passcode)'\n".write(
            toFile: answer, atomically: true, encoding: .utf8)
        let dismissed = home.directory + "/askpass-cancel"
        try "#!/bin/sh\nexit 1\n".write(toFile: dismissed, atomically: true, encoding: .utf8)
        for path in [answer, dismissed] { chmod(path, 0o700) }
        #expect(AskpassPassphraseSource.fromEnvironment(["KEYGATE_ASKPASS": answer])?.program == answer)
        #expect(AskpassPassphraseSource.fromEnvironment(["SSH_ASKPASS": answer]) == nil, "SSH_ASKPASS needs a display")
        #expect(AskpassPassphraseSource.fromEnvironment(["SSH_ASKPASS": answer, "DISPLAY": ":0"])?.program == answer)

        let control = try AccessControl(protection: .whenUnlocked, flags: .devicePasscode)
        let keychain = try Self.keychain(
            "com.example.gui", home: home, source: AskpassPassphraseSource(program: answer))
        try await keychain.add(AddRequest(service: "s", account: "a", accessControl: control, data: SecretData("v")))
        let items = try await keychain.copyMatching(ItemQuery(service: "s", account: "a", returnData: true))
        #expect(items.first?.data == SecretData("v"))
        let cancelling = try Self.keychain(
            "com.example.gui", home: home, source: AskpassPassphraseSource(program: dismissed))
        await #expect(throws: KeygateError(.userCanceled, "")) {
            _ = try await cancelling.copyMatching(ItemQuery(service: "s", account: "a", returnData: true))
        }
    }

    @Test func standardPathsFollowXDGAndRefuseBadNames() throws {
        let paths = try StandardPaths(
            application: "com.example.app", environment: ["XDG_DATA_HOME": "/d", "XDG_RUNTIME_DIR": "/r"])
        #expect(paths.store == "/d/com.example.app/items.db")
        #expect(paths.auditTrail == "/d/com.example.app/audit.jsonl")
        #expect(paths.runtimeDirectory == "/r/com.example.app")
        #expect(paths.ledgerDirectory == "/d/keygate")
        let fallback = try StandardPaths(
            application: "keygate", environment: ["HOME": "/home/u", "XDG_DATA_HOME": "rel"])
        #expect(fallback.dataDirectory == "/home/u/.local/share/keygate")
        #expect(fallback.runtimeDirectory == nil)
        for bad in ["", ".", "..", "a/b", "a\nb"] {
            #expect(throws: KeygateError(.param, "")) {
                try StandardPaths(application: bad, environment: ["HOME": "/h"])
            }
        }
        let noHome = #expect(throws: KeygateError.self) { try StandardPaths(application: "x", environment: [:]) }
        #expect(noHome?.status == .notAvailable)
        #expect(noHome?.condition == .noHome)
    }

    @Test func theLinuxDeviceReadsItsSourcesAtEverySnapshot() throws {
        let home = try Home()
        let enrolled = home.directory + "/fingers"
        try "right-index\n".write(toFile: enrolled, atomically: true, encoding: .utf8)
        let warnings = WarningLog()
        let device = LinuxDevice(
            mode: .locked, environment: ["KEYGATE_ENROLLMENT_FILE": enrolled, "PATH": "/nonexistent"],
            onWarning: { warnings.append($0) })
        var snapshot = device.snapshot()
        #expect(snapshot.device.isLocked && !snapshot.device.hasBeenUnlockedSinceBoot)
        #expect(snapshot.biometryAvailable && snapshot.enrollment == EnrollmentSetHash(templateIDs: ["right-index"]))
        try FileManager.default.removeItem(atPath: enrolled)
        snapshot = device.snapshot()
        #expect(!snapshot.biometryAvailable && snapshot.enrollment == nil, "read again, and now unavailable")
        #expect(warnings.all.contains { $0.contains("biometry is unavailable") })
        #expect(!LinuxDevice(mode: .unlocked, environment: ["PATH": "/nonexistent"]).snapshot().device.isLocked)
    }
}

/// Warnings collected from a device.
final class WarningLog: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}
