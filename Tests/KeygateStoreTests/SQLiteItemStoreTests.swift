import Foundation
import Glibc
import KeygatePolicy
import Testing

@testable import KeygateStore

/// What only the SQLite + libsodium backend promises.
@Suite struct SQLiteItemStoreTests {
    @Test func filesAreCreatedPrivately() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/nested/keygate/items.db"
        let store = try SQLiteItemStore(path: path)
        try store.insert([Fixtures.item(Fixtures.fields(), "v")])
        func mode(_ path: String) throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
        }
        #expect(try mode(directory.path + "/nested/keygate") == 0o700)
        #expect(try mode(path) == 0o600)
        #expect(try mode(path + ".key") == 0o600)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + ".key")).count == 32)
    }

    @Test func valuesAreEncryptedAtRest() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.db"
        let store = try SQLiteItemStore(path: path)
        try store.insert([Fixtures.item(Fixtures.fields(service: "visible-service"), "very-secret-token-1234")])
        let connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 1000)
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(bytes.range(of: Data("visible-service".utf8)) != nil, "metadata is stored in the clear")
        #expect(bytes.range(of: Data("very-secret-token-1234".utf8)) == nil, "the value is not")
    }

    @Test func reopeningKeepsItems() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.db"
        try SQLiteItemStore(path: path).insert([Fixtures.item(Fixtures.fields(), "kept")])
        let reopened = try SQLiteItemStore(path: path)
        let found = try reopened.items(matching: Fixtures.all)
        #expect(Fixtures.text(try reopened.open(found[0])) == "kept")
    }

    @Test func editingTheAccessControlColumnIsDetected() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.db"
        let store = try SQLiteItemStore(path: path)
        let protected = try AccessControl(protection: .whenUnlockedThisDeviceOnly, flags: .devicePasscode)
        try store.insert([Fixtures.item(Fixtures.fields(control: protected), "secret")])
        // An attacker with the database file downgrades the item to "no constraint".
        let raw = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 1000)
        try raw.execute("UPDATE items SET accc = 'aku;dacl(true)'")
        let tampered = try store.items(matching: Fixtures.all)[0]
        #expect(tampered.fields.accessControl.constraint.kind == .allow)
        do {
            _ = try store.open(tampered)
            Issue.record("a downgraded item must not open")
        } catch {
            #expect(error.status == .decode)
        }
        // A protection column that disagrees with the access control marks the row damaged.
        try raw.execute("UPDATE items SET pdmn = 'dk'")
        var record = try store.items(matching: Fixtures.all)[0]
        #expect(record.damage?.contains("disagrees") == true)
        #expect(throws: KeygateError.self) { try store.open(record) }
        // Garbage in the access-control column, too; nothing satisfies its placeholder.
        try raw.execute("UPDATE items SET pdmn = 'aku', accc = 'aku;od(cfoo(true))'")
        record = try store.items(matching: Fixtures.all)[0]
        #expect(record.damage != nil)
        #expect(record.fields.accessControl.constraint.kind == .deny)
        #expect(throws: KeygateError.self) { try store.open(record) }
    }

    @Test func swappingCiphertextsBetweenRowsIsDetected() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.db"
        let store = try SQLiteItemStore(path: path)
        try store.insert([
            Fixtures.item(Fixtures.fields(account: "a"), "value-a"),
            Fixtures.item(Fixtures.fields(account: "b"), "value-b"),
        ])
        let raw = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 1000)
        try raw.execute(
            """
            CREATE TEMP TABLE original AS SELECT id, nonce, value FROM items;
            UPDATE items SET nonce = (SELECT nonce FROM original WHERE original.id != items.id),
                             value = (SELECT value FROM original WHERE original.id != items.id);
            """)
        for record in try store.items(matching: Fixtures.all) {
            #expect(
                throws: KeygateError(
                    .decode,
                    "item #\(record.id.rawValue) cannot be decrypted: it was tampered with, or sealed under another key"
                )
            ) {
                try store.open(record)
            }
        }
    }

    @Test func anotherKeyCannotOpenValues() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.db"
        try SQLiteItemStore(path: path).insert([Fixtures.item(Fixtures.fields(), "v")])
        let other = try SQLiteItemStore(path: path, keyProvider: StaticKeyProvider(key: SecretData.random(count: 32)))
        let record = try other.items(matching: Fixtures.all)[0]
        #expect(throws: KeygateError.self) { try other.open(record) }
    }

    @Test func aCorruptFileIsRefusedAndLeftUntouched() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.db"
        let garbage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        try garbage.write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        do {
            _ = try SQLiteItemStore(path: path)
            Issue.record("a corrupt database must not open")
        } catch {
            #expect(error.status == .notAvailable)
            #expect(error.message.contains(path))
            #expect(error.message.contains("the file was not changed"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test func aDatabaseOthersCanReadIsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.db"
        _ = try SQLiteItemStore(path: path)
        chmod(path, 0o644)
        do {
            _ = try SQLiteItemStore(path: path)
            Issue.record("a database readable by others must not open")
        } catch {
            #expect(error.message.contains("chmod 600"))
        }
    }

    @Test func aMissingKeyIsNotReplacedWhileItemsExist() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.db"
        try SQLiteItemStore(path: path).insert([Fixtures.item(Fixtures.fields(), "v")])
        try FileManager.default.removeItem(atPath: path + ".key")
        let store = try SQLiteItemStore(path: path)
        let record = try store.items(matching: Fixtures.all)[0]
        #expect(throws: KeygateError.self) { try store.open(record) }
        #expect(throws: KeygateError.self) { try store.insert([Fixtures.item(Fixtures.fields(account: "new"), "w")]) }
        #expect(!FileManager.default.fileExists(atPath: path + ".key"), "no new key was made")
    }

    @Test func aDamagedRowCanStillBeDeleted() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.db"
        let store = try SQLiteItemStore(path: path)
        try store.insert([
            Fixtures.item(Fixtures.fields(account: "ok"), "1"), Fixtures.item(Fixtures.fields(account: "bad"), "2"),
        ])
        try store.executeRawSQL("UPDATE items SET accc = 'garbage' WHERE acct = 'bad'")
        let records = try store.items(matching: Fixtures.all)
        #expect(records.map { $0.damage == nil } == [true, false], "one bad row does not break the search")
        #expect(Fixtures.text(try store.open(records[0])) == "1")
        #expect(throws: KeygateError.self) { try store.open(records[1]) }
        try store.delete([records[1].id])
        #expect(try store.items(matching: Fixtures.all).count == 1)
    }

    @Test func aConcurrentChangeIsNotOverwritten() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.db"
        let store = try SQLiteItemStore(path: path)
        try store.insert([Fixtures.item(Fixtures.fields(), "v1")])
        let stale = try store.items(matching: Fixtures.all)[0]
        try SQLiteItemStore(path: path).replace([
            ItemReplacement(id: stale.id, fields: stale.fields, data: SecretData("v2"))
        ])
        do {
            try store.replace([ItemReplacement(replacing: stale, fields: stale.fields, data: SecretData("v3"))])
            Issue.record("a stale replacement must fail")
        } catch {
            #expect(error.status == .notAvailable)
        }
        #expect(Fixtures.text(try store.open(try store.items(matching: Fixtures.all)[0])) == "v2")
    }

    @Test func textWithNULIsStoredWhole() throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteItemStore(path: directory.path + "/items.db")
        try store.insert([
            Fixtures.item(Fixtures.fields(account: "a\u{0}x"), "1"), Fixtures.item(Fixtures.fields(account: "a"), "2"),
        ])
        let records = try store.items(matching: Fixtures.all)
        #expect(records.map(\.fields.identity.account) == ["a\u{0}x", "a"])
        #expect(Fixtures.text(try store.open(records[0])) == "1")
    }

    @Test func aNewerSchemaIsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.db"
        _ = try SQLiteItemStore(path: path)
        try SQLiteConnection(path: path, busyTimeoutMilliseconds: 1000).execute("PRAGMA user_version = 99")
        do {
            _ = try SQLiteItemStore(path: path)
            Issue.record("a newer schema must not open")
        } catch {
            #expect(error.message.contains("schema version 99"))
        }
    }

    @Test func keyFileReadableByOthersIsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.key"
        _ = try KeyFileProvider(path: path).key()
        chmod(path, 0o644)
        #expect(throws: KeygateError.self) { try KeyFileProvider(path: path).key() }
    }

    @Test func twoConnectionsRacingAnAddLeaveOneRow() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.db"
        _ = try SQLiteItemStore(path: path)
        let outcomes = await withTaskGroup(of: KeygateStatus.self) { group in
            for index in 0..<8 {
                group.addTask {
                    do throws(KeygateError) {
                        let store = try SQLiteItemStore(path: path)
                        try store.insert([Fixtures.item(Fixtures.fields(account: "same"), "v\(index)")])
                        return .success
                    } catch {
                        return error.status
                    }
                }
            }
            var all: [KeygateStatus] = []
            for await status in group { all.append(status) }
            return all
        }
        #expect(outcomes.filter { $0 == .success }.count == 1)
        #expect(outcomes.filter { $0 == .duplicateItem }.count == 7)
        #expect(try SQLiteItemStore(path: path).items(matching: Fixtures.all).count == 1)
    }

    @Test func sqliteErrorsMapToApplesStatuses() {
        // spec §6.1, last row
        let cases: [(Int32, KeygateStatus)] = [
            (19, .duplicateItem), (2067, .duplicateItem), (8, .readOnly), (7, .allocate), (10, .io), (266, .io),
            (20, .noSuchAttr), (5, .notAvailable), (11, .notAvailable), (26, .notAvailable),
        ]
        for (code, status) in cases {
            #expect(SQLiteConnection.error(code: code, message: "m", path: "p").status == status, "code \(code)")
        }
    }
}
