import Foundation
import KeygatePolicy
import KeygateStore
import KeygateTesting
import Testing

/// Issue 9 point 9: values and backup headers are bounded, each with a clear status (audit
/// lines: ``AuditLimitTests``).
@Suite struct LimitTests {
    static func bytes(_ count: Int) -> SecretData { SecretData(bytes: [UInt8](repeating: 0x61, count: count)) }

    @Test(arguments: Backend.allCases)
    func valuesOverTheConfiguredLimitAreRefused(_ backend: Backend) throws {
        let store = try TemporaryStore(backend, maximumValueLength: 16)
        try store.insert([NewItem(fields: Fixtures.fields(account: "fits"), data: Self.bytes(16))])
        do {
            try store.insert([NewItem(fields: Fixtures.fields(account: "big"), data: Self.bytes(17))])
            Issue.record("a value over the limit must be refused")
        } catch {
            #expect(error.status == .param)
            #expect(error.message.contains("17 bytes, more than the store's limit of 16 bytes"))
        }
        let record = try #require(try store.items(matching: Fixtures.all).first)
        #expect(try store.items(matching: Fixtures.all).count == 1, "nothing was added")
        #expect(
            throws: KeygateError(
                .param,
                "the value of \(record.fields.identity) is 17 bytes, more than the store's limit of 16 bytes; nothing was changed"
            )
        ) {
            try store.replace([ItemReplacement(id: record.id, fields: record.fields, data: Self.bytes(17))])
        }
        #expect(try store.open(try store.items(matching: Fixtures.all)[0]).count == 16, "the value is unchanged")
    }

    @Test(arguments: Backend.allCases)
    func theDefaultLimitIs16MiB(_ backend: Backend) throws {
        #expect(ItemLimits.defaultMaximumValueLength == 16 * 1024 * 1024)
        let store = try TemporaryStore(backend)
        do {
            try store.insert([NewItem(fields: Fixtures.fields(), data: Self.bytes(16 * 1024 * 1024 + 1))])
            Issue.record("a value over 16 MiB must be refused by default")
        } catch {
            #expect(error.status == .param)
            #expect(error.message.contains("limit of 16 MiB (16777216 bytes)"))
        }
    }

    /// A crafted header asking Argon2id for 64 passes over 1 GiB ran for minutes before failing.
    /// Parameters beyond what export writes are refused before any key derivation.
    static let craftedParameters: [(UInt64, UInt64)] = [
        (64, 1 << 30), (11, 8192), (3, (256 << 20) + 1024), (0, 8192), (1, 1024),
    ]

    @Test(arguments: craftedParameters)
    func backupKeyDerivationParametersAreBounded(_ operations: UInt64, _ memory: UInt64) {
        func bigEndian(_ value: UInt64) -> [UInt8] {
            (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
        let header =
            Array("KGBACKUP1".utf8) + bigEndian(operations) + bigEndian(memory) + [UInt8](repeating: 1, count: 16)
        let crafted = header + [UInt8](repeating: 2, count: 24 + 16 + 32)
        do {
            _ = try BackupArchive.open(crafted, passphrase: SecretData("pw"))
            Issue.record("a crafted header must not open")
        } catch {
            #expect(error.status == .decode)
            #expect(error.message.contains("key-derivation parameters are out of range"), "\(error.message)")
        }
    }

    @Test func whatExportWritesIsWithinTheBounds() throws {
        #expect(BackupArchive.maximumOperations == 10)
        #expect(BackupArchive.maximumMemory == 256 * 1024 * 1024)
        let sealed = try BackupArchive.seal([], passphrase: SecretData("pw"), strength: .minimumForTests)
        #expect(try BackupArchive.open(sealed, passphrase: SecretData("pw")).isEmpty)
    }
}
