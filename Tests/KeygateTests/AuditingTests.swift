import Foundation
import Keygate
import KeygatePolicy
import KeygateStore
import KeygateTesting
import Testing

/// The facade fails closed on auditing and never writes a secret into the trail.
@Suite struct AuditingTests {
    @Test(arguments: Backend.allCases)
    func anUnwritableRequiredTrailDeniesAnAllowedRead(_ backend: Backend) async throws {
        let fixture = try KeychainFixture(backend)
        try await KeychainTests.add(fixture, value: "v")
        let blocker = FileManager.default.temporaryDirectory.appendingPathComponent(
            "keygate-blocker-\(UUID().uuidString)"
        ).path
        try "not a directory".write(toFile: blocker, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: blocker) }
        let auditor = Auditor(sink: JSONLinesAuditSink(path: blocker + "/audit.jsonl"), isRequired: true)
        let audited = Keychain(
            store: fixture.store, accessGroups: ["group.app"], authenticator: fixture.authenticator, auditor: auditor)
        do {
            _ = try await audited.copyMatching(KeychainTests.read())
            Issue.record("a read whose audit record cannot be written must be denied")
        } catch {
            #expect(error.status == .io)
            #expect(error.message.contains("audit record could not be written"))
        }
        // Not required: the same read goes ahead.
        let lenient = Keychain(
            store: fixture.store, accessGroups: ["group.app"], authenticator: fixture.authenticator,
            auditor: Auditor(sink: JSONLinesAuditSink(path: blocker + "/audit.jsonl"), isRequired: false))
        #expect(text(try await lenient.copyMatching(KeychainTests.read()).first?.data) == "v")
    }

    @Test(arguments: Backend.allCases)
    func everyStepIsAuditedAndNoSecretReachesTheTrail(_ backend: Backend) async throws {
        let fixture = try KeychainFixture(backend)
        let audit = AuditRecorder()
        let keychain = Keychain(
            store: fixture.store, accessGroups: ["group.app"], authenticator: fixture.authenticator,
            device: fixture.device, clock: fixture.clock,
            auditor: Auditor(sink: audit, processID: 42, userID: 1000))
        let secret = "s3cr3t-value-\(UUID().uuidString)"
        let control = try AccessControl(protection: .whenUnlockedThisDeviceOnly, flags: .devicePasscode)
        try await keychain.add(
            AddRequest(service: "api", account: "me", accessControl: control, data: SecretData(secret)))
        _ = try await keychain.copyMatching(KeychainTests.read())
        fixture.authenticator.enqueue(.fail, .fail, .fail, .fail, .fail, for: .passcode)
        let context = fixture.context()
        for _ in 0..<5 {
            _ = try? await keychain.copyMatching(KeychainTests.read(), context: context)
        }
        try await keychain.delete(ItemQuery(service: "api"))
        let kinds = audit.records.map(\.event.kind)
        #expect(
            kinds.contains(.add) && kinds.contains(.read) && kinds.contains(.authenticate) && kinds.contains(.delete))
        #expect(kinds.contains(.lockout), "the fifth failure locked the passcode out")
        #expect(audit.records.allSatisfy { $0.event.processID == 42 && $0.event.userID == 1000 })
        #expect(!audit.records.map(\.line).joined().contains(secret))
        audit.expectLastDecision(.read, service: "api", account: "me", is: .authenticate)
    }

    @Test func tamperIsAudited() async throws {
        let fixture = try KeychainFixture(.sqlite)
        let audit = AuditRecorder()
        let keychain = Keychain(
            store: fixture.store, accessGroups: ["group.app"], authenticator: fixture.authenticator,
            auditor: Auditor(sink: audit))
        try await keychain.add(AddRequest(service: "api", account: "me", data: SecretData("v")))
        // The ciphertext is replaced behind the store's back (a wrong key is refused at open).
        let other = try SQLiteItemStore(path: fixture.directory! + "/items.db")
        try other.executeRawSQL("UPDATE items SET value = randomblob(length(value))")
        let foreign = Keychain(
            store: other, accessGroups: ["group.app"], authenticator: fixture.authenticator,
            auditor: Auditor(sink: audit))
        #expect(await KeychainTests.status { _ = try await foreign.copyMatching(KeychainTests.read()) } == .decode)
        #expect(audit.records.contains { $0.event.kind == .tamper && $0.event.status == .decode })
    }
}
