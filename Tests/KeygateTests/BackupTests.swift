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
}
