import FoundationEssentials
import Glibc
import Keygate
import KeygatePolicy
import KeygateStore
import Synchronization

/// `keygate demo`: the real engine on a fresh temporary store, step by step.
///
/// It uses the embedded SQLite + libsodium store and a real audit trail in a temporary
/// directory (never the user's items), a simulated device, and a simulated authenticator in
/// place of PAM, so it runs on a fresh machine with no PAM configuration.
struct DemoCommand: Command {
    static let configuration = CommandConfiguration(
        name: "demo", summary: "run Keygate on a temporary store and show each decision",
        discussion: """
            usage: keygate demo

            Runs Keygate on a fresh temporary store: the classic keychain-wrapper checks (read before
            save, save, replace, delete twice), then a userPresence item read with a (simulated)
            proof, the same read while locked, a biometryCurrentSet item after an enrollment change,
            a tampered row, and 'audit verify' on the demo's trail. Then a table of dry-run decisions.
            Needs no PAM configuration and never touches your items.
            """)

    init(parsing arguments: ParsedArguments) {}

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "keygate-demo-\(UUID().uuidString)"
        ).path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let walkthrough = try Walkthrough(directory: directory)
        do {
            try await walkthrough.run()
        } catch let error as KeygateError {
            throw error
        } catch {
            throw KeygateError(.internalError, "\(error)")
        }
        let console = context.console
        console.out("Keygate demo: a fresh store in \(directory) (removed afterwards)\n")
        console.out(Table(walkthrough.rows).rendered)
        console.out("\nDry-run decisions of the engine for other situations:\n")
        console.out(PolicyTour.table())
        console.out("\n'ask' means the caller must prove one of the listed factor sets; see 'keygate evaluate --help'.")
        return walkthrough.failures == 0 ? .success : .failure
    }
}

/// The demo's steps, each checked against what Keygate must do.
private final class Walkthrough {
    let device = DemoDevice()
    let store: SQLiteItemStore
    let keychain: Keychain
    let credentials: CredentialStore
    let auditPath: String
    var rows: [[String]] = [["#", "step", "result", "expected", "ok"]]
    var failures = 0

    init(directory: String) throws(KeygateError) {
        store = try SQLiteItemStore(path: directory + "/items.db")
        auditPath = directory + "/audit.jsonl"
        keychain = Keychain(
            store: store, accessGroups: ["keygate.demo"], authenticator: DemoAuthenticator(), device: device,
            auditor: Auditor(
                sink: JSONLinesAuditSink(path: auditPath), processID: ProcessIdentity.processID,
                userID: ProcessIdentity.userID))
        credentials = CredentialStore(keychain: keychain, service: "demo")
    }

    func step(_ name: String, expect expected: String, _ body: () async throws -> String) async {
        let result: String
        do {
            result = try await body()
        } catch let error as KeygateError {
            result = "\(error.status.name ?? "\(error.status.rawValue)")"
        } catch {
            result = "error: \(error)"
        }
        let ok = result == expected
        if !ok { failures += 1 }
        rows.append(["\(rows.count)", name, result, expected, ok ? "yes" : "NO"])
    }

    func text(_ data: SecretData?) -> String {
        data.map { "\"" + $0.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } + "\"" } ?? "none"
    }

    func count() throws -> String {
        "\(try store.items(matching: ItemFilter(accessGroups: ["keygate.demo"], synchronizable: nil)).count) item(s)"
    }

    func read(_ account: String) async throws -> String {
        text(
            try await keychain.copyMatching(ItemQuery(service: "demo", account: account, returnData: true)).first?.data)
    }

    func run() async throws {
        let credentials = self.credentials
        await step("read before save", expect: "none") { text(try await credentials.read(account: "user")) }
        await step("save demo-one, read it back", expect: "\"demo-one\"") {
            try await credentials.save(SecretData("demo-one"), account: "user")
            return text(try await credentials.read(account: "user"))
        }
        await step("save demo-two to the same account", expect: "\"demo-two\"") {
            try await credentials.save(SecretData("demo-two"), account: "user")
            return text(try await credentials.read(account: "user"))
        }
        await step("count the items", expect: "1 item(s)") { try count() }
        await step("delete, then delete again", expect: "both succeeded") {
            try await credentials.delete(account: "user")
            try await credentials.delete(account: "user")
            return "both succeeded"
        }
        await step("read after delete", expect: "none") { text(try await credentials.read(account: "user")) }

        let keychain = self.keychain
        let presence = try AccessControl(protection: .whenUnlockedThisDeviceOnly, flags: .userPresence)
        await step("add a userPresence token (no prompt)", expect: "added") {
            try await keychain.add(
                AddRequest(service: "demo", account: "token", accessControl: presence, data: SecretData("t0k3n")))
            return "added"
        }
        await step("read it: simulated fingerprint proof", expect: "\"t0k3n\"") { try await read("token") }
        device.setLocked(true)
        await step("read it while the screen is locked", expect: "errSecInteractionNotAllowed") {
            try await read("token")
        }
        device.setLocked(false)

        let payment = try AccessControl(protection: .whenPasscodeSetThisDeviceOnly, flags: .biometryCurrentSet)
        await step("add a biometryCurrentSet payment key", expect: "added") {
            try await keychain.add(
                AddRequest(service: "demo", account: "payment", accessControl: payment, data: SecretData("p4y")))
            return "added"
        }
        await step("read it", expect: "\"p4y\"") { try await read("payment") }
        device.enrollAnotherFinger()
        await step("enroll another finger, read again", expect: "errSecItemNotFound") { try await read("payment") }
        await step("the invalidated key was removed", expect: "1 item(s)") { try count() }

        let store = self.store
        await step("edit the token's access control in the file", expect: "errSecDecode") {
            try store.executeRawSQL("UPDATE items SET accc = 'aku;dacl(true)' WHERE acct = 'token'")
            return try await read("token")
        }
        let auditPath = self.auditPath
        await step("keygate audit verify (the demo's trail)", expect: "intact") {
            let verdict = try AuditTrailFile.verify(at: auditPath)
            if case .intact(let count) = verdict { return count > 10 ? "intact" : "only \(count) records" }
            return verdict.description
        }
    }
}

/// The demo's simulated device: unlocked, a passcode, one enrolled finger, until the demo
/// locks it or enrolls another.
private final class DemoDevice: DeviceStateSource {
    private let state = Mutex((locked: false, fingers: ["right-index"]))

    func snapshot() -> DeviceSnapshot {
        state.withLock { state in
            DeviceSnapshot(
                device: DeviceState(isLocked: state.locked), biometryAvailable: true,
                enrollment: EnrollmentSetHash(templateIDs: state.fingers))
        }
    }

    func setLocked(_ locked: Bool) { state.withLock { $0.locked = locked } }
    func enrollAnotherFinger() { state.withLock { $0.fingers.append("left-thumb") } }
}

/// The demo's simulated authenticator: proves the first factor asked for, as if the user
/// touched the reader. Only `keygate demo` uses it; every other command uses PAM.
private struct DemoAuthenticator: Authenticator {
    func authenticate(_ requirement: Requirement, prompt: String, context: AuthenticationContext) async
        -> AuthenticationOutcome
    {
        guard let factors = requirement.alternatives.first else { return .unavailable("nothing to prove") }
        for factor in factors.factors { context.recordProof(of: factor) }
        return .proved(factors)
    }

    func mechanism(for factor: Factor) -> String? { "simulated" }
}
