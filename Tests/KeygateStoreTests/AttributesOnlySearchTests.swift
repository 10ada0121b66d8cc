import KeygatePolicy
import KeygateTesting
import Testing

@testable import KeygateStore

/// Issue 10 point 2: a search for attributes only (``ItemFilter/withoutValues``, what a list
/// asks) finds the same items with the same fields, in the same order, without reading a value;
/// such a record can never be opened, and a search with values still opens.
@Suite struct AttributesOnlySearchTests {
    private static func store(_ directory: TemporaryDirectory) throws -> SQLiteItemStore {
        let store = try SQLiteItemStore(path: directory.path + "/items.db")
        let passcode = try AccessControl(protection: .whenUnlocked, flags: [.devicePasscode])
        var items: [NewItem] = []
        for index in 0..<40 {
            let control = index % 3 == 0 ? passcode : try AccessControl(protection: .whenUnlocked)
            items.append(
                Fixtures.item(
                    Fixtures.fields(
                        service: "svc-\(index % 7)", account: "acct-\(index)",
                        group: index % 5 == 0 ? "group.b" : "group.a",
                        label: index % 2 == 0 ? "label \(index)" : nil, control: control),
                    "value-\(index)"))
        }
        try store.insert(items)
        return store
    }

    @Test(arguments: [
        Fixtures.all, ItemFilter(accessGroups: ["group.a"]), ItemFilter(accessGroups: ["group.a"], service: "svc-3"),
        ItemFilter(accessGroups: ["group.a", "group.b"], service: "svc-0", account: "acct-0"),
    ])
    func theSameItemsWithoutTheirValues(_ filter: ItemFilter) throws {
        let directory = try TemporaryDirectory()
        let store = try Self.store(directory)
        var attributesOnly = filter
        attributesOnly.withoutValues = true
        // Both orders, so each shape's cached statement is used after the other's.
        for _ in 0..<2 {
            let full = try store.items(matching: filter)
            let bare = try store.items(matching: attributesOnly)
            #expect(!full.isEmpty)
            #expect(bare.map(\.id) == full.map(\.id))
            #expect(bare.map(\.fields) == full.map(\.fields))
            #expect(bare.allSatisfy { $0.damage == nil })
            for record in full { #expect(Fixtures.text(try store.open(record)).hasPrefix("value-")) }
            for record in bare {
                #expect(throws: KeygateError.self) { _ = try store.open(record) }
                do {
                    try store.verify(record)
                    Issue.record("a record read without its value verified")
                } catch {
                    #expect(error.status == .decode)
                    #expect(error.condition == .foreignRecord)
                }
            }
        }
    }

    /// A damaged row is reported as damaged whether or not its value is read.
    @Test func damageIsFoundWithoutTheValue() throws {
        let directory = try TemporaryDirectory()
        let store = try Self.store(directory)
        try store.executeRawSQL("UPDATE items SET accc = 'nonsense' WHERE acct = 'acct-4'")
        var filter = ItemFilter(accessGroups: ["group.a"])
        filter.withoutValues = true
        let damaged = try store.items(matching: filter).filter { $0.damage != nil }
        #expect(damaged.map(\.fields.identity.account) == ["acct-4"])
    }
}
