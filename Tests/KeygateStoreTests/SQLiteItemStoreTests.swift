import Foundation
import Glibc
import KeygatePolicy
import KeygateTesting
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

    /// Issue 9 point 3: a wrong 32-byte key used to open the store, and `add` sealed new items
    /// under it. The key-check value refuses it at open, before anything is written.
    @Test func aWrongKeyIsRefusedAtOpen() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.db"
        try SQLiteItemStore(path: path).insert([Fixtures.item(Fixtures.fields(), "v")])
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        do {
            _ = try SQLiteItemStore(path: path, keyProvider: StaticKeyProvider(key: SecretData.random(count: 32)))
            Issue.record("a wrong key must be refused at open")
        } catch {
            #expect(error.status == .decode)
            #expect(error.message.contains("key-check"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "nothing was written")
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        let store = try SQLiteItemStore(path: path)
        #expect(Fixtures.text(try store.open(try store.items(matching: Fixtures.all)[0])) == "v")
    }

    /// An empty store also keeps the key it was made with.
    @Test func anEmptyStoreRemembersItsKey() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.db"
        let key = SecretData.random(count: 32)
        _ = try SQLiteItemStore(path: path, keyProvider: StaticKeyProvider(key: key))
        _ = try SQLiteItemStore(path: path, keyProvider: StaticKeyProvider(key: key))
        #expect(throws: KeygateError.self) {
            try SQLiteItemStore(path: path, keyProvider: StaticKeyProvider(key: SecretData.random(count: 32)))
        }
    }

    /// A store made before key-checks (migration v2 adds the table) is checked against its
    /// items, and gets a key-check value from the first key that opens one.
    @Test func aStoreWithoutAKeyCheckIsCheckedAgainstItsItems() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.db"
        let store = try SQLiteItemStore(path: path)
        try store.insert([Fixtures.item(Fixtures.fields(), "v")])
        try store.executeRawSQL("DROP TABLE metadata; DROP TABLE keys; PRAGMA user_version = 1")
        do {
            _ = try SQLiteItemStore(path: path, keyProvider: StaticKeyProvider(key: SecretData.random(count: 32)))
            Issue.record("a key that opens no item must be refused")
        } catch {
            #expect(error.status == .decode)
        }
        _ = try SQLiteItemStore(path: path)
        let raw = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 1000)
        let check = try raw.statement("SELECT count(*) FROM metadata WHERE name = 'keycheck.v1'")
        _ = try check.step()
        #expect(check.integer(0) == 1)
    }

    /// Issue 9 point 3: a missing or zero-byte database beside an existing key used to be a
    /// new, empty store. The key says items existed, so it is refused, naming both paths.
    @Test(arguments: ["missing", "empty"])
    func aLostDatabaseBesideItsKeyIsRefused(_ how: String) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.db"
        try SQLiteItemStore(path: path).insert([Fixtures.item(Fixtures.fields(), "v")])
        try FileManager.default.removeItem(atPath: path)
        if how == "empty" {
            #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]))
        }
        do {
            _ = try SQLiteItemStore(path: path)
            Issue.record("a lost database must not become a new store")
        } catch {
            #expect(error.status == .notAvailable)
            #expect(error.message.contains(path + " is \(how)"))
            #expect(error.message.contains(path + ".key exists"))
        }
        #expect(FileManager.default.fileExists(atPath: path) == (how == "empty"))
        #expect(((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) == 0)
    }

    /// A new store never leaves its key beside an empty database file.
    @Test func aNewStoreReopensAfterItsFirstOpen() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.db"
        let first = try SQLiteItemStore(path: path)
        #expect(((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) > 0)
        _ = try SQLiteItemStore(path: path)
        _ = first
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
        do {
            _ = try SQLiteItemStore(path: path)
            Issue.record("a store whose key is lost must not open")
        } catch {
            #expect(error.status == .notAvailable)
            #expect(error.message.contains("is missing"))
        }
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
