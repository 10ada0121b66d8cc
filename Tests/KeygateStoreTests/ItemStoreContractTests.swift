import KeygatePolicy
import KeygateStore
import Testing

/// The duties of `ItemStore`, run against every backend (see the protocol's doc comment).
@Suite struct ItemStoreContractTests {
    @Test(arguments: Backend.allCases)
    func insertFindAndOpen(_ backend: Backend) throws {
        let (store, _directory) = try backend.make()
        _ = _directory
        let records = try store.insert([
            Fixtures.item(Fixtures.fields(account: "alice", label: "first"), "one"),
            Fixtures.item(Fixtures.fields(account: "bob"), "two"),
        ])
        #expect(records.count == 2)
        let found = try store.items(matching: Fixtures.all)
        #expect(found.map(\.fields.identity.account) == ["alice", "bob"], "in the order added")
        #expect(found[0].fields == Fixtures.fields(account: "alice", label: "first"))
        #expect(Fixtures.text(try store.open(found[0])) == "one")
        #expect(Fixtures.text(try store.open(found[1])) == "two")
        #expect(!"\(found[0])".contains("one"), "a record's description never shows the value")
    }

    @Test(arguments: Backend.allCases)
    func primaryKeyIsUniqueAndInsertsAreAllOrNothing(_ backend: Backend) throws {
        let (store, _directory) = try backend.make()
        _ = _directory
        try store.insert([Fixtures.item(Fixtures.fields(), "one")])
        #expect(throws: KeygateError.self) { try store.insert([Fixtures.item(Fixtures.fields(label: "other"), "x")]) }
        do {
            try store.insert([
                Fixtures.item(Fixtures.fields(account: "carol"), "c"), Fixtures.item(Fixtures.fields(), "dup"),
            ])
            Issue.record("expected errSecDuplicateItem")
        } catch {
            #expect(error.status == .duplicateItem)
        }
        #expect(try store.items(matching: Fixtures.all).count == 1, "nothing of the failed batch was added")
        // Synchronizable is part of the key; so is the access group.
        try store.insert([
            Fixtures.item(Fixtures.fields(sync: true), "s"), Fixtures.item(Fixtures.fields(group: "group.b"), "b"),
        ])
        #expect(try store.items(matching: Fixtures.all).count == 3)
    }

    @Test(arguments: Backend.allCases)
    func replaceIsAllOrNothing(_ backend: Backend) throws {
        let (store, _directory) = try backend.make()
        _ = _directory
        let records = try store.insert([
            Fixtures.item(Fixtures.fields(account: "a"), "va"), Fixtures.item(Fixtures.fields(account: "b"), "vb"),
            Fixtures.item(Fixtures.fields(account: "c"), "vc"),
        ])
        // a → x succeeds alone, but b → c collides: nothing changes.
        do {
            try store.replace([
                ItemReplacement(id: records[0].id, fields: Fixtures.fields(account: "x"), data: SecretData("new")),
                ItemReplacement(id: records[1].id, fields: Fixtures.fields(account: "c"), data: SecretData("vb")),
            ])
            Issue.record("expected errSecDuplicateItem")
        } catch {
            #expect(error.status == .duplicateItem)
        }
        var found = try store.items(matching: Fixtures.all)
        #expect(found.map(\.fields.identity.account) == ["a", "b", "c"])
        #expect(Fixtures.text(try store.open(found[0])) == "va")
        // Swapping two identities in one replace is not a collision.
        try store.replace([
            ItemReplacement(id: records[0].id, fields: Fixtures.fields(account: "b"), data: SecretData("va")),
            ItemReplacement(id: records[1].id, fields: Fixtures.fields(account: "a"), data: SecretData("vb")),
        ])
        found = try store.items(matching: Fixtures.all)
        #expect(found.map(\.fields.identity.account) == ["b", "a", "c"])
        #expect(Fixtures.text(try store.open(found[0])) == "va")
        // A replacement of an item that is gone fails and changes nothing.
        try store.delete([records[2].id])
        do {
            try store.replace([
                ItemReplacement(id: records[0].id, fields: Fixtures.fields(account: "z"), data: SecretData("z")),
                ItemReplacement(id: records[2].id, fields: Fixtures.fields(account: "c"), data: SecretData("c")),
            ])
            Issue.record("expected errSecItemNotFound")
        } catch {
            #expect(error.status == .itemNotFound)
        }
        #expect(try store.items(matching: Fixtures.all).map(\.fields.identity.account) == ["b", "a"])
    }

    @Test(arguments: Backend.allCases)
    func filtersMatchEveryGivenAttribute(_ backend: Backend) throws {
        let (store, _directory) = try backend.make()
        _ = _directory
        let akpu = try AccessControl(protection: .whenPasscodeSetThisDeviceOnly)
        try store.insert([
            Fixtures.item(Fixtures.fields(service: "s1", account: "a", label: "L"), "1"),
            Fixtures.item(Fixtures.fields(service: "s1", account: "a", sync: true), "2"),
            Fixtures.item(Fixtures.fields(service: "s2", account: "a", group: "group.b", control: akpu), "3"),
        ])
        func accounts(_ filter: ItemFilter) throws -> Int { try store.items(matching: filter).count }
        #expect(try accounts(ItemFilter(accessGroups: ["group.a", "group.b"])) == 2, "non-sync only by default")
        #expect(try accounts(ItemFilter(accessGroups: ["group.a", "group.b"], synchronizable: true)) == 1)
        #expect(try accounts(ItemFilter(accessGroups: ["group.a", "group.b"], synchronizable: nil)) == 3)
        #expect(try accounts(ItemFilter(accessGroups: ["group.b"], synchronizable: nil)) == 1)
        #expect(try accounts(ItemFilter(accessGroups: [], synchronizable: nil)) == 0)
        #expect(
            try accounts(ItemFilter(accessGroups: ["group.a", "group.b"], service: "s1", synchronizable: nil)) == 2)
        #expect(try accounts(ItemFilter(accessGroups: ["group.a", "group.b"], label: "L")) == 1)
        #expect(
            try accounts(ItemFilter(accessGroups: ["group.a", "group.b"], protection: .whenPasscodeSetThisDeviceOnly))
                == 1)
        #expect(try accounts(ItemFilter(accessGroups: ["group.a", "group.b"], account: "nobody")) == 0)
    }

    @Test(arguments: Backend.allCases)
    func deleteIgnoresMissingIDs(_ backend: Backend) throws {
        let (store, _directory) = try backend.make()
        _ = _directory
        let records = try store.insert([Fixtures.item(Fixtures.fields(), "one")])
        try store.delete([records[0].id, ItemID(999)])
        try store.delete([records[0].id])
        #expect(try store.items(matching: Fixtures.all).isEmpty)
    }

    @Test(arguments: Backend.allCases)
    func boundAccessControlSurvivesTheStore(_ backend: Backend) throws {
        let (store, _directory) = try backend.make()
        _ = _directory
        let hash = EnrollmentSetHash(templateIDs: ["f1"])!
        let control = try AccessControl(
            protection: .whenUnlockedThisDeviceOnly, flags: [.biometryCurrentSet, .or, .devicePasscode]
        )
        .bound(to: hash)
        try store.insert([Fixtures.item(Fixtures.fields(control: control), "v")])
        #expect(try store.items(matching: Fixtures.all)[0].fields.accessControl == control)
    }
}
