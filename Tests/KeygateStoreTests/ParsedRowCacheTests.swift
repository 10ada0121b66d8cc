import KeygatePolicy
import KeygateStore
import KeygateTesting
import Testing

/// Issue 13 point 2 and issue 10 point 3: the SQLite store parses a row's access control once
/// per version of the row, and the cache never hides a change made behind its back.
@Suite struct ParsedRowCacheTests {
    static func sqlLiteral(_ text: String) -> String {
        "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''") + "'"
    }

    /// An access control rewritten in the file after a read (the cache warm) is read afresh:
    /// the record shows the new one, and the value, sealed for the old one, does not open.
    @Test func anAccessControlEditedAfterAReadIsSeen() throws {
        let store = try TemporaryStore(.sqlite)
        let sqlite = try #require(store.base as? SQLiteItemStore)
        let record = try store.insert([Fixtures.item(Fixtures.fields(), "v")])[0]
        for _ in 0..<2 { _ = try store.open(try store.items(matching: Fixtures.all)[0]) }
        let stronger = try AccessControl(protection: .whenUnlocked, flags: [.userPresence])
        try sqlite.executeRawSQL(
            "UPDATE items SET accc = \(Self.sqlLiteral(stronger.textForm)) WHERE id = \(record.id.rawValue)")
        let read = try store.items(matching: Fixtures.all)[0]
        #expect(read.fields.accessControl == stronger)
        let error = #expect(throws: KeygateError.self) { try store.open(read) }
        #expect(error?.status == .decode)
        #expect(error?.cause == .sodium(function: "crypto_aead_xchacha20poly1305_ietf_decrypt", result: -1))
    }

    /// Rows sharing one access control and rows with their own, read in one list and again:
    /// each record has its own row's access control, and every value opens.
    @Test func aListOfMixedAccessControlsGivesEachRowItsOwn() throws {
        let store = try TemporaryStore(.sqlite)
        let plain = try AccessControl(protection: .whenUnlocked)
        let presence = try AccessControl(protection: .afterFirstUnlock, flags: [.userPresence])
        let items = (0..<50).map { index in
            Fixtures.item(
                Fixtures.fields(account: "a\(index)", control: index % 3 == 0 ? presence : plain), "value \(index)")
        }
        try store.insert(items)
        for _ in 0..<2 {
            let records = try store.items(matching: Fixtures.all)
            #expect(records.count == 50)
            for (index, record) in records.enumerated() {
                #expect(record.fields.identity.account == "a\(index)")
                #expect(record.fields.accessControl == (index % 3 == 0 ? presence : plain))
                #expect(Fixtures.text(try store.open(record)) == "value \(index)")
            }
        }
    }

    /// A point read and a list share the cache without mixing up names: the list form selects
    /// the names, the point form takes them from the filter.
    @Test func pointReadsAndListsAgree() throws {
        let store = try TemporaryStore(.sqlite)
        try store.insert([
            Fixtures.item(Fixtures.fields(account: "x"), "1"), Fixtures.item(Fixtures.fields(account: "y"), "2"),
            Fixtures.item(Fixtures.fields(account: "x", group: "group.b"), "3"),
        ])
        let listed = try store.items(matching: Fixtures.all)
        for record in listed {
            let point = try store.items(
                matching: ItemFilter(
                    accessGroups: [record.fields.identity.accessGroup], service: record.fields.identity.service,
                    account: record.fields.identity.account))
            #expect(point == [record])
        }
        #expect(listed.map(\.fields.identity.accessGroup) == ["group.a", "group.a", "group.b"])
    }

    /// A point read (service and account given, no sync filter) of an item that exists both
    /// synchronizable and not, in two access groups, gives the rows in the order they were added
    /// (the store orders them itself: its point query has no ORDER BY).
    @Test func aPointReadGivesItsRowsInTheOrderTheyWereAdded() throws {
        let store = try TemporaryStore(.sqlite)
        let added = try store.insert([
            Fixtures.item(Fixtures.fields(group: "group.b", sync: true), "1"),
            Fixtures.item(Fixtures.fields(group: "group.a", sync: true), "2"),
            Fixtures.item(Fixtures.fields(group: "group.b"), "3"),
            Fixtures.item(Fixtures.fields(group: "group.a"), "4"),
        ])
        let read = try store.items(
            matching: ItemFilter(
                accessGroups: ["group.a", "group.b"], service: "api", account: "alice", synchronizable: nil))
        #expect(read.map(\.id) == added.map(\.id))
        #expect(try read.map { Fixtures.text(try store.open($0)) } == ["1", "2", "3", "4"])
        let one = try store.items(
            matching: ItemFilter(accessGroups: ["group.a"], service: "api", account: "alice", synchronizable: nil))
        #expect(one.map(\.id) == [added[1].id, added[3].id])
    }

    /// More rows than the cache holds texts, read in turn and again: each record has its own
    /// row's access control (shared or not), and every value opens.
    @Test func manyRowsReadOneByOneKeepTheirOwnAccessControls() throws {
        let store = try TemporaryStore(.sqlite)
        let controls = try [
            AccessControl(protection: .whenUnlocked), AccessControl(protection: .afterFirstUnlock),
            AccessControl(protection: .whenUnlocked, flags: [.userPresence]),
            AccessControl(protection: .whenUnlockedThisDeviceOnly),
            AccessControl(protection: .afterFirstUnlock, flags: [.userPresence]),
            AccessControl(protection: .whenPasscodeSetThisDeviceOnly, flags: [.userPresence]),
        ]
        try store.insert(
            (0..<60).map { Fixtures.item(Fixtures.fields(account: "a\($0)", control: controls[$0 * 7 % 6]), "v\($0)") })
        for round in 0..<2 {
            for index in (0..<60).map({ ($0 * 13 + round) % 60 }) {
                let read = try store.items(
                    matching: ItemFilter(accessGroups: ["group.a"], service: "api", account: "a\(index)"))
                #expect(read.count == 1)
                #expect(read.first?.fields.accessControl == controls[index * 7 % 6])
                #expect(try read.first.map { Fixtures.text(try store.open($0)) } == "v\(index)")
            }
        }
    }
}
