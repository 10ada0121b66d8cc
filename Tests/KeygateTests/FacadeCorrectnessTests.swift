import Foundation
import Keygate
import KeygatePolicy
import KeygateTesting
import Testing

@testable import KeygateStore

/// Regressions found by using the library as an app and its tests would (issue 14), and the
/// facade's half of the hardening issue (issue 9, points 1 and 2).
@Suite struct FacadeCorrectnessTests {
    // MARK: - Delete of items the search invalidated

    @Test(arguments: Backend.allCases)
    func deletingAnAkpuItemAfterThePasscodeWasRemovedSucceeds(_ backend: Backend) async throws {
        // spec §2 and §7.5: odel(true); the first call after the removal is the delete.
        let fixture = try KeychainFixture(backend)
        let (keychain, audit) = fixture.audited(groups: ["group.app"])
        try await keychain.add(
            AddRequest(
                service: "api", account: "akpu", protection: .whenPasscodeSetThisDeviceOnly, data: SecretData("x")))
        fixture.device.removePasscode()
        try await keychain.delete(ItemQuery(service: "api", account: "akpu"))
        #expect(try fixture.rows() == 0)
        audit.expectLastDecision(.delete, service: "api", account: "akpu", is: .allow, because: .invalidated)
        // A second delete finds nothing, as Apple's does.
        await #expect(throws: KeygateError(.itemNotFound, "")) {
            try await keychain.delete(ItemQuery(service: "api", account: "akpu"))
        }
    }

    @Test(arguments: Backend.allCases)
    func deletingAnInvalidatedBiometryItemSucceedsAndTheRemovalNamesBothHashes(_ backend: Backend) async throws {
        let fixture = try KeychainFixture(backend)
        let (keychain, audit) = fixture.audited(groups: ["group.app"])
        let control = try AccessControl(protection: .whenUnlockedThisDeviceOnly, flags: .biometryCurrentSet)
        try await keychain.add(
            AddRequest(service: "api", account: "bio", accessControl: control, data: SecretData("x")))
        let before = try #require(fixture.device.enrollment)
        fixture.device.enroll("left-thumb")
        let after = try #require(fixture.device.enrollment)
        try await keychain.delete(ItemQuery(service: "api", account: "bio"))
        #expect(try fixture.rows() == 0)
        let removal = try #require(audit.records(.delete, service: "api", account: "bio").last)
        #expect(removal.event.notes.contains(.enrollment(bound: before, now: after)))
    }

    // MARK: - CredentialStore's default group

    @Test(arguments: Backend.allCases)
    func aCredentialStoreWithTheDefaultGroupNeverReachesIntoAnotherGroup(_ backend: Backend) async throws {
        let fixture = try KeychainFixture(backend)
        let mine = CredentialStore(keychain: fixture.keychain, service: "api")
        let shared = CredentialStore(keychain: fixture.keychain, service: "api", accessGroup: "group.shared")
        try await shared.save(SecretData("shared-value"), account: "me")
        #expect(try await mine.read(account: "me") == nil, "the shared group's item is not the default group's")
        try await mine.save(SecretData("mine"), account: "me")
        #expect(text(try await shared.read(account: "me")) == "shared-value", "saving did not overwrite it")
        #expect(text(try await mine.read(account: "me")) == "mine")
        try await mine.delete(account: "me")
        #expect(text(try await shared.read(account: "me")) == "shared-value", "deleting did not remove it")
        #expect(try await mine.read(account: "me") == nil)
    }

    // MARK: - Refused requests are audited

    @Test(arguments: Backend.allCases)
    func aRequestForAnotherGroupIsRefusedAndAudited(_ backend: Backend) async throws {
        let fixture = try KeychainFixture(backend)
        let (keychain, audit) = fixture.audited(groups: ["group.app"])
        let other = "com.other.app"
        var read = ItemQuery(service: "api", account: "me", accessGroup: other, returnData: true)
        await #expect(throws: KeygateError(.missingEntitlement, "")) { _ = try await keychain.copyMatching(read) }
        audit.expectLastDecision(
            .read, service: "api", account: "me", accessGroup: other, is: .deny, status: .missingEntitlement,
            because: .refused)
        await #expect(throws: KeygateError(.missingEntitlement, "")) {
            try await keychain.add(AddRequest(service: "api", account: "me", accessGroup: other, data: SecretData("v")))
        }
        audit.expectLastDecision(.add, service: "api", account: "me", accessGroup: other, is: .deny)
        read.returnData = false
        await #expect(throws: KeygateError(.missingEntitlement, "")) {
            try await keychain.update(read, changes: ItemChanges(data: SecretData("x")))
        }
        audit.expectLastDecision(.update, service: "api", account: "me", accessGroup: other, is: .deny)
        await #expect(throws: KeygateError(.missingEntitlement, "")) { try await keychain.delete(read) }
        audit.expectLastDecision(.delete, service: "api", account: "me", accessGroup: other, is: .deny)
        // Moving an item into another group is refused and audited too.
        await #expect(throws: KeygateError(.missingEntitlement, "")) {
            try await keychain.update(
                ItemQuery(service: "api", account: "me"), changes: ItemChanges(accessGroup: other))
        }
        audit.expectLastDecision(.update, service: "api", account: "me", is: .deny, status: .missingEntitlement)
        // A caller with no groups at all.
        let nobody = Keychain(
            store: fixture.store, accessGroups: [], authenticator: fixture.authenticator, clock: fixture.clock,
            auditor: Auditor(sink: audit))
        await #expect(throws: KeygateError(.missingEntitlement, "")) {
            _ = try await nobody.copyMatching(ItemQuery(service: "api", account: "me", returnData: true))
        }
        audit.expectLastDecision(.read, service: "api", account: "me", is: .deny, status: .missingEntitlement)
    }

    @Test func aRefusalWhoseRecordCannotBeWrittenFailsWithTheAuditError() async throws {
        let failing = Keychain(
            store: InMemoryItemStore(), accessGroups: ["group.app"], authenticator: ScriptedAuthenticator(),
            auditor: Auditor(sink: FailingAuditSink(), isRequired: true))
        do {
            _ = try await failing.copyMatching(ItemQuery(accessGroup: "group.other", returnData: true))
            Issue.record("the refusal must still fail the call")
        } catch {
            #expect(error.status == FailingAuditSink.status)
        }
    }

    // MARK: - One lockout per keychain, one per device

    @Test(arguments: Backend.allCases)
    func fiveFailuresInSeparateCallsAndContextsLockThePasscodeOut(_ backend: Backend) async throws {
        // spec §4.3: the counter belongs to the keychain, not to one context.
        let fixture = try KeychainFixture(backend)
        try await KeychainTests.add(fixture, flags: .devicePasscode)
        fixture.authenticator.setDefault(.fail, for: .passcode)
        for _ in 0..<5 {
            await #expect(throws: KeygateError(.authFailed, "")) {
                _ = try await fixture.keychain.copyMatching(KeychainTests.read(), context: fixture.context())
            }
        }
        fixture.authenticator.setDefault(.succeed, for: .passcode)
        let before = fixture.authenticator.prompts(for: .passcode).count
        await #expect(throws: KeygateError(.authFailed, "")) {
            _ = try await fixture.keychain.copyMatching(KeychainTests.read())
        }
        #expect(fixture.authenticator.prompts(for: .passcode).count == before, "no prompt during the lockout")
        // The lockout ends after its time.
        fixture.clock.advance(seconds: 301)
        #expect(text(try await fixture.keychain.copyMatching(KeychainTests.read()).first?.data) == "secret-value")
    }

    @Test(arguments: Backend.allCases)
    func aDeviceBiometryLockoutHoldsForEveryContextUntilThePasscode(_ backend: Backend) async throws {
        let fixture = try KeychainFixture(backend)
        try await KeychainTests.add(fixture, flags: .userPresence)
        fixture.device.lockOutBiometry()
        _ = try await fixture.keychain.copyMatching(KeychainTests.read(), context: fixture.context())
        #expect(fixture.authenticator.prompts(for: .biometry).isEmpty, "biometry is locked out for the device")
        #expect(fixture.authenticator.prompts(for: .passcode).count == 1)
        // The passcode proof lifted it: the next read, in another context, asks for biometry.
        _ = try await fixture.keychain.copyMatching(KeychainTests.read(), context: fixture.context())
        #expect(fixture.authenticator.prompts(for: .biometry).count == 1)
    }

    // MARK: - One clock

    @Test func aContextWithAnotherClockIsRefusedAndADefaultContextUsesTheKeychainsClock() async throws {
        let fixture = try KeychainFixture(.inMemory)
        try await KeychainTests.add(fixture, flags: .devicePasscode)
        let foreign = AuthenticationContext(clock: ManualClock(start: Timestamp(seconds: 5)))
        await #expect(throws: KeygateError(.param, "")) {
            _ = try await fixture.keychain.copyMatching(KeychainTests.read(), context: foreign)
        }
        #expect(fixture.authenticator.prompts.isEmpty)
        // A context made without a clock reads the keychain's: its proof ages follow the manual clock.
        let context = AuthenticationContext(state: AuthenticationState(reuseSeconds: 10))
        _ = try await fixture.keychain.copyMatching(KeychainTests.read(), context: context)
        #expect(context.state.proofs[.passcode]?.time == fixture.clock.now())
        fixture.clock.advance(seconds: 5)
        _ = try await fixture.keychain.copyMatching(KeychainTests.read(), context: context)
        #expect(fixture.authenticator.prompts.count == 1, "reused within the window on the keychain's clock")
        fixture.clock.advance(seconds: 6)
        _ = try await fixture.keychain.copyMatching(KeychainTests.read(), context: context)
        #expect(fixture.authenticator.prompts.count == 2, "stale after the window on the keychain's clock")
    }

    // MARK: - API shapes

    @Test func errorsCompareByStatusAndMatchInCatchClauses() async throws {
        #expect(KeygateError(.itemNotFound, "one message") == KeygateError(.itemNotFound, "another"))
        #expect(KeygateError(.itemNotFound, "same") != KeygateError(.authFailed, "same"))
        let fixture = try KeychainFixture(.inMemory)
        do {
            _ = try await fixture.keychain.copyMatching(KeychainTests.read())
            Issue.record("nothing was added")
        } catch KeygateStatus.itemNotFound {
            // Matched by status.
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func promptsNameTheOperationAndTheItem() async throws {
        let fixture = try KeychainFixture(.inMemory)
        try await KeychainTests.add(fixture, account: "a", flags: .devicePasscode)
        try await fixture.keychain.update(
            ItemQuery(service: "api", account: "a"), changes: ItemChanges(data: SecretData("new")))
        let prompt = try #require(fixture.authenticator.prompts.last)
        #expect(prompt.operation == .update)
        #expect(prompt.item == ItemIdentity(accessGroup: "group.app", account: "a", service: "api"))
    }

    @Test func auditLookupsTellTheSameAccountInTwoGroupsApart() async throws {
        let fixture = try KeychainFixture(.inMemory)
        let (keychain, audit) = fixture.audited(groups: ["group.app", "group.shared"])
        try await keychain.add(AddRequest(service: "api", account: "me", data: SecretData("a")))
        try await keychain.add(
            AddRequest(service: "api", account: "me", accessGroup: "group.shared", data: SecretData("b")))
        let shared = ItemIdentity(accessGroup: "group.shared", account: "me", service: "api")
        #expect(audit.records(.add, service: "api", account: "me").count == 2)
        #expect(audit.records(.add, item: shared).count == 1)
        #expect(audit.records(.add, item: shared).first?.event.item?.accessGroup == "group.shared")
    }

    // MARK: - Issue 9, point 2: update never launders an edited access control

    /// Issue 13 point 1: the search finds a damaged row once per call; the read and the update
    /// refuse it from what the search found (one tamper record each, the store's condition),
    /// with nothing decided and nobody prompted.
    @Test func aDamagedRowIsRefusedFromTheSearchOncePerCall() async throws {
        let fixture = try KeychainFixture(.sqlite)
        let (keychain, audit) = fixture.audited(groups: ["group.app"])
        try await keychain.add(AddRequest(service: "api", account: "me", data: SecretData("v")))
        try fixture.editDatabase("UPDATE items SET accc = 'damaged by a test'")
        for (kind, call) in [
            (
                AuditEvent.Kind.read,
                { () async throws(KeygateError) in
                    _ = try await keychain.copyMatching(ItemQuery(service: "api", account: "me", returnData: true))
                }
            ),
            (
                AuditEvent.Kind.update,
                { () async throws(KeygateError) in
                    try await keychain.update(
                        ItemQuery(service: "api", account: "me"), changes: ItemChanges(label: "x"))
                }
            ),
        ] {
            let before = audit.lastSequence
            do throws(KeygateError) {
                try await call()
                Issue.record("a damaged row must be refused (\(kind))")
            } catch {
                #expect(error.status == .decode && error.condition == .damagedItem, "\(kind): \(error)")
            }
            let records = audit.records.filter { $0.sequence > before }
            #expect(records.filter { $0.event.kind == .tamper }.count == 1, "\(kind)")
            #expect(records.filter { $0.event.kind == kind }.allSatisfy { $0.event.gives(AuditNote.Code.storeFailure) })
        }
        #expect(fixture.authenticator.prompts.isEmpty)
    }

    @Test func updateRefusesARowWhoseAccessControlWasEdited() async throws {
        let fixture = try KeychainFixture(.sqlite)
        let (keychain, audit) = fixture.audited(groups: ["group.app"])
        let control = try AccessControl(protection: .whenUnlocked, flags: .devicePasscode)
        try await keychain.add(AddRequest(service: "api", account: "me", accessControl: control, data: SecretData("v")))
        // Someone with write access to the database but not the key downgrades the item.
        try fixture.editDatabase("UPDATE items SET accc = 'ak;dacl(true)'")
        await #expect(throws: KeygateError(.decode, "")) {
            try await keychain.update(
                ItemQuery(service: "api", account: "me"), changes: ItemChanges(data: SecretData("new")))
        }
        #expect(fixture.authenticator.prompts.isEmpty, "nothing was decided on the edited control")
        #expect(audit.records(.update, service: "api", account: "me").allSatisfy { $0.event.decision == .deny })
        #expect(audit.records.contains { $0.event.kind == .tamper })
        // Nothing was written: the row still fails to open, so it still cannot be read.
        await #expect(throws: KeygateError(.decode, "")) {
            _ = try await keychain.copyMatching(ItemQuery(service: "api", account: "me", returnData: true))
        }
    }

    /// Columns edited to a class that would be invalidated now (whenPasscodeSet on a device
    /// without a passcode) do not get the item erased as "not found": the sealed value does not
    /// vouch for them, so the read is errSecDecode and the row stays.
    @Test func aRowEditedToLookInvalidatedIsDamageNotRemoved() async throws {
        let fixture = try KeychainFixture(.sqlite)
        let (keychain, audit) = fixture.audited(groups: ["group.app"])
        try await keychain.add(AddRequest(service: "api", account: "me", data: SecretData("v")))
        try fixture.editDatabase("UPDATE items SET pdmn = 'akpu', accc = 'akpu;dacl(true)'")
        fixture.device.removePasscode()
        await #expect(throws: KeygateError(.decode, "")) {
            _ = try await keychain.copyMatching(ItemQuery(service: "api", account: "me", returnData: true))
        }
        #expect(try fixture.rows() == 1, "the edited row was removed")
        // A search for attributes only (a list) reads the row again whole before it would remove it.
        let listed = try await keychain.copyMatching(
            ItemQuery(service: "api", matchLimit: .all, returnAttributes: true))
        #expect(listed.count == 1)
        #expect(try fixture.rows() == 1, "the edited row was removed by a list")
        #expect(!audit.records.contains { $0.event.kind == .delete })
    }
}

/// A sink that always fails, as a full disk would.
private struct FailingAuditSink: AuditSink {
    static let status = KeygateStatus.io

    func append(_ event: AuditEvent, at time: Timestamp) throws(KeygateError) -> AuditRecord {
        throw KeygateError(Self.status, "the trail cannot be written")
    }
}

/// Names are bytes: an entitlement to a group spelled in NFC is not one to its NFD spelling.
@Suite struct EntitlementBytesTests {
    @Test(arguments: Backend.allCases)
    func anNFDSpellingOfAnEntitledGroupIsAnotherGroup(_ backend: Backend) async throws {
        let nfc = "gr\u{00F6}up", nfd = "gro\u{0308}up"
        #expect(nfc == nfd, "Swift calls them equal; Keygate must not")
        let fixture = try KeychainFixture(backend, groups: [nfc])
        await #expect(throws: KeygateError(.missingEntitlement, "")) {
            _ = try await fixture.keychain.copyMatching(ItemQuery(accessGroup: nfd, returnData: true))
        }
    }
}

/// The app-facing conveniences of the real-users issue.
@Suite struct AppConvenienceTests {
    @Test(arguments: Backend.allCases)
    func savingOverAProtectedValueAsksOnceWithThePromptGiven(_ backend: Backend) async throws {
        let fixture = try KeychainFixture(backend)
        let presence = try AccessControl(protection: .whenUnlocked, flags: .userPresence)
        let tokens = CredentialStore(keychain: fixture.keychain, service: "api", accessControl: presence)
        try await tokens.save(SecretData("one"), account: "me")
        #expect(fixture.authenticator.prompts.isEmpty, "adding needs no proof")
        try await tokens.save(SecretData("two"), account: "me", prompt: "Replace the token")
        #expect(fixture.authenticator.prompts.map(\.text) == ["Replace the token"])
        try await tokens.delete(account: "me", prompt: "Forget the token")
        #expect(fixture.authenticator.prompts.count == 1, "delete needs no proof")
    }

    @Test func secretDataConvertsFromAndToDataAndUTF8() {
        let secret = SecretData(Data([0x68, 0x69]))
        #expect(secret.utf8String() == "hi")
        #expect(secret.dataCopy() == Data("hi".utf8))
        #expect(SecretData(bytes: [0xFF]).utf8String() == nil)
        #expect("\(secret)" == "<SecretData: 2 bytes>")
    }

    @Test func aSimulatedDeviceHasNoBiometryByDefaultAsALinuxMachineWithoutFprintd() {
        let plain = SimulatedDevice().snapshot()
        #expect(!plain.biometryAvailable && plain.enrollment == nil)
        let enrolled = SimulatedDevice(enrolled: ["right-index"]).snapshot()
        #expect(enrolled.biometryAvailable && enrolled.enrollment != nil)
    }
}

/// An auditor made without an identity records this process's, never pid 0 uid 0.
@Test func anAuditorRecordsThisProcessByDefault() throws {
    let recorder = AuditRecorder()
    try Auditor(sink: recorder).record(AuditEvent(kind: .read, decision: .allow))
    let event = try #require(recorder.records.first?.event)
    #expect(event.processID == getpid() && event.userID == geteuid() && event.executable == nil)
    try Auditor(sink: recorder, executable: "/usr/bin/app").record(AuditEvent(kind: .read, decision: .allow))
    let line = try #require(recorder.records.last?.line)
    #expect(line.contains("\"exe\": \"/usr/bin/app\""))
    let parsed = try AuditRecord(line: line, file: "trail", lineNumber: 2)
    #expect(parsed.event.executable == "/usr/bin/app")
}
