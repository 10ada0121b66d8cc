import Foundation
import KeygateItems
import KeygatePolicy
import KeygateTesting
import Testing

@testable import KeygateStore

/// Key items beside the items (spec §9.4): stored in their own table, found by their
/// attributes, their keeper blob bound to every field that decides a use.
@Suite struct KeyItemStoreTests {
    static func key(
        label: String? = "deploy", group: String = "group.a",
        applicationLabel: [UInt8] = Array(repeating: 7, count: 20),
        control: AccessControl = try! AccessControl(protection: .whenUnlockedThisDeviceOnly)
    ) -> KeyFields {
        KeyFields(
            accessGroup: group, label: label, applicationLabel: applicationLabel, type: .p256,
            tokenID: "keygate.software", publicKey: [4] + Array(repeating: 1, count: 64), accessControl: control,
            created: Fixtures.now, modified: Fixtures.now)
    }

    static let all = KeyFilter(accessGroups: ["group.a", "group.b"])

    /// A key is found by its attributes, its blob opens to exactly what was stored, and it is
    /// never an item: item searches do not see it.
    @Test(arguments: Backend.allCases)
    func aKeyIsStoredBesideTheItemsAndOpensItsBlob(_ backend: Backend) throws {
        let store = try TemporaryStore(backend)
        try store.insert([Fixtures.item(Fixtures.fields(), "password")])
        let record = try store.insertKey(Self.key(), blob: SecretData("blob-bytes"), joining: nil)
        let found = try store.keys(matching: KeyFilter(accessGroups: ["group.a"], label: "deploy"))
        #expect(found.map(\.id) == [record.id])
        #expect(found.first?.fields == Self.key())
        #expect(Fixtures.text(try store.openKey(try #require(found.first))) == "blob-bytes")
        #expect(try store.keys(matching: KeyFilter(accessGroups: ["group.b"])).isEmpty, "another group")
        #expect(try store.keys(matching: KeyFilter(accessGroups: ["group.a"], label: "other")).isEmpty)
        #expect(try store.items(matching: Fixtures.all).count == 1, "a key is not an item")
        #expect(!String(describing: found).contains("blob-bytes"))
    }

    /// Spec 9.4.11 / 9.4.12: the same application label, tag, type and token twice in one group
    /// is errSecDuplicateItem and changes nothing; another application label never collides.
    @Test(arguments: Backend.allCases)
    func aDuplicateKeyIsRefused(_ backend: Backend) throws {
        let store = try TemporaryStore(backend)
        try store.insertKey(Self.key(), blob: SecretData("one"), joining: nil)
        #expect(throws: KeygateError.self) { try store.insertKey(Self.key(), blob: SecretData("two"), joining: nil) }
        do {
            try store.insertKey(Self.key(label: "again"), blob: SecretData("two"), joining: nil)
            Issue.record("a duplicate was stored")
        } catch {
            #expect(error.status == .duplicateItem)
        }
        try store.insertKey(
            Self.key(applicationLabel: Array(repeating: 8, count: 20)), blob: SecretData("three"), joining: nil)
        #expect(try store.keys(matching: Self.all).count == 2)
    }

    /// An update keeps the blob and refuses a record another writer changed since it was read;
    /// a delete of such a record deletes nothing.
    @Test(arguments: Backend.allCases)
    func updatesKeepTheBlobAndLoseNoRace(_ backend: Backend) throws {
        let store = try TemporaryStore(backend)
        let first = try store.insertKey(Self.key(), blob: SecretData("blob"), joining: nil)
        var renamed = first.fields
        renamed.label = "renamed"
        try store.updateKey(first, to: renamed, joining: nil)
        let now = try #require(try store.keys(matching: Self.all).first)
        #expect(now.fields.label == "renamed")
        #expect(Fixtures.text(try store.openKey(now)) == "blob")
        do {
            try store.updateKey(first, to: first.fields, joining: nil)
            Issue.record("a stale record updated the key")
        } catch {
            #expect(error.status == .notAvailable)
            #expect(error.condition == .racingWriter)
        }
        do {
            try store.deleteKeys([first], joining: nil)
            Issue.record("a stale record deleted the key")
        } catch {
            #expect(error.condition == .racingWriter)
        }
        #expect(try store.keys(matching: Self.all).count == 1)
        try store.deleteKeys([now], joining: nil)
        #expect(try store.keys(matching: Self.all).isEmpty)
        try store.deleteKeys([now], joining: nil)  // gone already: ignored
    }

    /// Someone who can write the database file but not read the key: changing the access
    /// control, the label or the public key, or moving a blob to another row, makes the key
    /// fail to open (errSecDecode), never a use of a blob under other fields.
    @Test(arguments: [
        "UPDATE keys SET accc = 'pdmn(ak)' WHERE labl = 'guarded'",
        "UPDATE keys SET labl = 'renamed' WHERE labl = 'guarded'",
        "UPDATE keys SET pubk = x'00' WHERE labl = 'guarded'",
        "UPDATE keys SET nonce = (SELECT nonce FROM keys WHERE labl = 'plain'), "
            + "value = (SELECT value FROM keys WHERE labl = 'plain') WHERE labl = 'guarded'",
        "UPDATE keys SET type = 'rsa' WHERE labl = 'guarded'",
    ])
    func anEditedKeyRowDoesNotOpen(_ sql: String) throws {
        let store = try TemporaryStore(.sqlite)
        let presence = try AccessControl(
            protection: .whenUnlockedThisDeviceOnly, flags: [.privateKeyUsage, .userPresence])
        try store.insertKey(Self.key(label: "guarded", control: presence), blob: SecretData("guarded"), joining: nil)
        try store.insertKey(
            Self.key(label: "plain", applicationLabel: Array(repeating: 9, count: 20)), blob: SecretData("plain"),
            joining: nil)
        try (store.base as! SQLiteItemStore).executeRawSQL(sql)
        let records = try store.keys(matching: Self.all)
        #expect(records.count == 2, "a damaged key is still listed, so it can be deleted")
        let edited = try #require(records.first { $0.fields.label != "plain" })
        do {
            _ = try store.openKey(edited)
            Issue.record("an edited key opened")
        } catch {
            #expect(error.status == .decode)
        }
        try store.deleteKeys([edited], joining: nil)
        #expect(try store.keys(matching: Self.all).map(\.fields.label) == ["plain"])
    }

    /// A store made before key items (schema v2) gains the keys table at its next open and
    /// keeps its items.
    @Test func aVersionTwoStoreIsMigrated() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.db"
        do {
            let store = try SQLiteItemStore(path: path)
            try store.insert([Fixtures.item(Fixtures.fields(), "kept")])
            try store.executeRawSQL("DROP TABLE keys; PRAGMA user_version = 2")
        }
        let store = try SQLiteItemStore(path: path)
        #expect(try store.items(matching: Fixtures.all).count == 1)
        try store.insertKey(Self.key(), blob: SecretData("blob"), joining: nil)
        #expect(try store.keys(matching: Self.all).count == 1)
    }
}
