import Keygate
import KeygatePolicy
import KeygateStore
import KeygateTesting
import Testing

/// Encrypted backups: what migrates, all-or-nothing import, wrong passphrases and tampering.
@Suite struct BackupTests {
    static let passphrase = SecretData("correct horse battery staple")

    func seeded(_ backend: Backend) async throws -> KeychainFixture {
        let fixture = try KeychainFixture(backend)
        try await KeychainTests.add(fixture, account: "plain", value: "p")
        try await KeychainTests.add(
            fixture, account: "device-only", protection: .whenUnlockedThisDeviceOnly, value: "d")
        try await KeychainTests.add(fixture, account: "finger", flags: .biometryCurrentSet, value: "f")
        try await KeychainTests.add(fixture, account: "synced", sync: true, value: "s")
        return fixture
    }

    func restored(_ backup: [UInt8], into target: KeychainFixture) async throws -> [String: String] {
        try await target.keychain.importBackup(backup, passphrase: Self.passphrase)
        var query = ItemQuery(synchronizable: .any, returnData: true, returnAttributes: true)
        query.matchLimit = .all
        var values: [String: String] = [:]
        for item in try await target.keychain.copyMatching(query) {
            values[item.attributes!.identity.account] = text(item.data)
        }
        return values
    }

    @Test(arguments: Backend.allCases)
    func thisDeviceOnlyItemsNeverMigrate(_ backend: Backend) async throws {
        let source = try await seeded(backend)
        let backup = try await source.keychain.exportBackup(passphrase: Self.passphrase, strength: .minimumForTests)
        #expect(source.authenticator.prompts.map(\.factor) == [.biometry], "exporting a protected item needs a proof")
        let target = try KeychainFixture(backend)
        target.device.enroll("new-device-finger")
        let values = try await restored(backup, into: target)
        #expect(values == ["plain": "p", "finger": "f", "synced": "s"])
        // The biometryCurrentSet item was bound again to the new device's enrollment set.
        let finger = try await target.keychain.copyMatching(ItemQuery(account: "finger", returnAttributes: true))
        #expect(finger.first?.attributes?.accessControl.boundEnrollment == target.device.enrollment)
    }

    @Test(arguments: Backend.allCases)
    func aWrongPassphraseOrATamperedBackupImportsNothing(_ backend: Backend) async throws {
        let source = try await seeded(backend)
        let backup = try await source.keychain.exportBackup(passphrase: Self.passphrase, strength: .minimumForTests)
        let target = try KeychainFixture(backend)
        #expect(
            await KeychainTests.status {
                try await target.keychain.importBackup(backup, passphrase: SecretData("wrong"))
            } == .decode)
        for index in [0, 12, 40, backup.count - 1] {
            var tampered = backup
            tampered[index] ^= 0x01
            #expect(
                await KeychainTests.status {
                    try await target.keychain.importBackup(tampered, passphrase: Self.passphrase)
                } == .decode)
        }
        #expect(
            await KeychainTests.status {
                try await target.keychain.importBackup(Array(backup.prefix(30)), passphrase: Self.passphrase)
            } == .decode)
        #expect(try target.rows() == 0)
    }

    @Test(arguments: Backend.allCases)
    func importIsAllOrNothing(_ backend: Backend) async throws {
        let source = try await seeded(backend)
        let backup = try await source.keychain.exportBackup(passphrase: Self.passphrase, strength: .minimumForTests)
        let target = try KeychainFixture(backend)
        try await KeychainTests.add(target, account: "synced", sync: true, value: "already here")
        #expect(
            await KeychainTests.status { try await target.keychain.importBackup(backup, passphrase: Self.passphrase) }
                == .duplicateItem)
        #expect(try target.rows() == 1, "nothing was half-imported")
        // A caller without the backup's access group cannot import it.
        let stranger = Keychain(
            store: InMemoryItemStore(), accessGroups: ["group.stranger"], authenticator: target.authenticator)
        #expect(
            await KeychainTests.status { try await stranger.importBackup(backup, passphrase: Self.passphrase) }
                == .missingEntitlement)
    }

    @Test(arguments: Backend.allCases)
    func exportStopsOnACancel(_ backend: Backend) async throws {
        let source = try await seeded(backend)
        source.authenticator.enqueue(.cancel, for: .biometry)
        #expect(
            await KeychainTests.status {
                _ = try await source.keychain.exportBackup(passphrase: Self.passphrase, strength: .minimumForTests)
            } == .userCanceled)
        #expect(
            await KeychainTests.status {
                _ = try await source.keychain.exportBackup(passphrase: SecretData(""), strength: .minimumForTests)
            } == .param)
    }

    /// A backup sealed by hand: what a crafted file may hold, which export never writes.
    static func crafted(_ items: [(account: String, sync: Bool, control: AccessControl)]) throws -> [UInt8] {
        try BackupArchive.seal(
            items.map { item in
                BackupArchive.Entry(
                    fields: ItemFields(
                        identity: ItemIdentity(
                            accessGroup: "group.app", account: item.account, service: "api", synchronizable: item.sync),
                        accessControl: item.control, created: Timestamp(seconds: 1), modified: Timestamp(seconds: 1)),
                    data: SecretData("v"))
            }, passphrase: passphrase, strength: .minimumForTests)
    }

    /// Add refuses a synchronizable item with an access control (errSecParam); so does import,
    /// all or nothing, before any prompt, and the refusal is audited.
    @Test(arguments: Backend.allCases)
    func importRefusesASynchronizableItemWithAnAccessControl(_ backend: Backend) async throws {
        let backup = try Self.crafted([
            ("plain", false, try AccessControl(protection: .whenUnlocked, flags: .userPresence)),
            ("synced-gated", true, try AccessControl(protection: .whenUnlocked, flags: .userPresence)),
        ])
        let target = try KeychainFixture(backend)
        let (keychain, audit) = target.audited(groups: ["group.app"])
        #expect(
            await KeychainTests.status { try await keychain.importBackup(backup, passphrase: Self.passphrase) }
                == .param)
        #expect(try target.rows() == 0, "nothing was imported")
        #expect(target.authenticator.prompts.isEmpty, "no prompt before a parameter check")
        let refusal = audit.records(.import, service: "api", account: "synced-gated").last
        #expect(refusal?.event.status == .param)
        #expect(refusal?.event.notes.contains { if case .refused = $0 { true } else { false } } == true)
    }

    /// A refusal is a decision too: a ThisDeviceOnly item in a crafted backup and a backup that
    /// does not open are audited as refused imports.
    @Test(arguments: Backend.allCases)
    func everyImportRefusalIsAudited(_ backend: Backend) async throws {
        let target = try KeychainFixture(backend)
        let (keychain, audit) = target.audited(groups: ["group.app"])
        let deviceOnly = try Self.crafted([
            ("device-only", false, try AccessControl(protection: .whenUnlockedThisDeviceOnly, flags: []))
        ])
        #expect(
            await KeychainTests.status { try await keychain.importBackup(deviceOnly, passphrase: Self.passphrase) }
                == .param)
        #expect(audit.records(.import, service: "api", account: "device-only").last?.event.status == .param)
        #expect(
            await KeychainTests.status { try await keychain.importBackup(deviceOnly, passphrase: SecretData("wrong")) }
                == .decode)
        #expect(audit.records.last?.event.kind == .import)
        #expect(audit.records.last?.event.status == .decode)
        #expect(try target.rows() == 0)
    }

    /// Update's per-item refusal (a gated item made synchronizable) is audited too.
    @Test(arguments: Backend.allCases)
    func updatesSynchronizableRefusalIsAudited(_ backend: Backend) async throws {
        let fixture = try KeychainFixture(backend)
        try await KeychainTests.add(fixture, account: "gated", flags: .userPresence, value: "g")
        let (keychain, audit) = fixture.audited(groups: ["group.app", "group.shared"])
        #expect(
            await KeychainTests.status {
                try await keychain.update(ItemQuery(account: "gated"), changes: ItemChanges(synchronizable: true))
            } == .param)
        #expect(audit.records(.update, service: "api", account: "gated").last?.event.status == .param)
        #expect(fixture.authenticator.prompts.isEmpty)
    }
}
