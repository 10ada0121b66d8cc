import Keygate
import KeygatePolicy
import KeygateStore

extension KeychainContractRun {
    func checkAddAndRead(_ keychain: any KeychainAccess) async {
        let item = Case.addAndRead
        await add(keychain, item, account: "me", name: "first", label: "Token", generic: [1, 2, 3])
        await expectNames(keychain, item, ItemQuery(service: "api", account: "me"), ["first"], "reading the value")
        let read = await attempt(item, "reading attributes") {
            try await keychain.copyMatching(
                ItemQuery(service: "api", account: "me", returnAttributes: true), context: nil)
        }
        guard let read else { return }
        expect(read.count == 1, item, "an attributes read returned \(read.count) items; expected 1")
        guard let found = read.first else { return }
        expect(found.data == nil, item, "an attributes-only read returned the value")
        guard let attributes = found.attributes else {
            fail(item, "an attributes read returned no attributes")
            return
        }
        let identity = attributes.identity
        expect(
            identity.service == "api" && identity.account == "me" && identity.accessGroup == keychain.accessGroups[0]
                && !identity.synchronizable, item, "the attributes name \(identity); expected api/me in the first group"
        )
        expect(attributes.label == "Token", item, "the label read back is \(attributes.label ?? "nil")")
        expect(attributes.generic == [1, 2, 3], item, "the generic bytes read back are \(attributes.generic ?? [])")
        expect(
            attributes.accessControl.protection == .whenUnlocked, item,
            "the protection read back is \(attributes.accessControl.protection)")
        expect(attributes.created <= attributes.modified, item, "created is after modified")
        let both = await attempt(item, "reading value and attributes") {
            try await keychain.copyMatching(
                ItemQuery(service: "api", returnData: true, returnAttributes: true), context: nil)
        }
        expect(
            both?.first.map { Self.name($0.data) == "first" && $0.attributes?.label == "Token" } ?? false, item,
            "a read asking for both did not return both")
    }

    func checkDuplicateAdd(_ keychain: any KeychainAccess) async {
        let item = Case.duplicateAdd
        await add(keychain, item, account: "me", name: "first")
        await expectFailure(item, .duplicateItem, "adding the same service and account again") {
            try await keychain.add(AddRequest(service: "api", account: "me", data: Self.value("second")), context: nil)
        }
        // The identity is service + account + group + sync: another of each is a new item.
        await add(keychain, item, account: "me", name: "other service", service: "web")
        await add(keychain, item, account: "me", name: "shared", group: keychain.accessGroups[1])
        await add(keychain, item, account: "me", name: "synced", sync: true)
        let first = ItemQuery(service: "api", account: "me", accessGroup: keychain.accessGroups[0])
        await expectNames(keychain, item, first, ["first"], "after the duplicate")
        await expectNames(
            keychain, item, ItemQuery(service: "api", account: "me", synchronizable: .any),
            ["first", "shared", "synced"],
            "every group and sync flag")
    }

    func checkMatchLimits(_ keychain: any KeychainAccess) async {
        let item = Case.matchLimits
        for index in 0..<4 { await add(keychain, item, account: "a\(index)", name: "v\(index)") }
        var query = ItemQuery(service: "api", returnData: true)
        let one = await attempt(item, "a read without a limit") { try await keychain.copyMatching(query, context: nil) }
        expect(one?.count == 1, item, "a read without a limit returned \(one?.count ?? 0) items; the default is one")
        query.matchLimit = .count(3)
        let three = await attempt(item, "a read limited to 3") { try await keychain.copyMatching(query, context: nil) }
        expect(three?.count == 3, item, "a read limited to 3 returned \(three?.count ?? 0)")
        await expectNames(keychain, item, ItemQuery(service: "api"), ["v0", "v1", "v2", "v3"], "a read of all")
        query.matchLimit = .count(0)
        await expectFailure(item, .param, "a match limit of 0") {
            _ = try await keychain.copyMatching(query, context: nil)
        }
    }

    func checkSynchronizable(_ keychain: any KeychainAccess) async {
        let item = Case.synchronizable
        await add(keychain, item, account: "me", name: "local")
        await add(keychain, item, account: "me", name: "synced", sync: true)
        var query = ItemQuery(service: "api")
        await expectNames(keychain, item, query, ["local"], "a read without synchronizable")
        query.synchronizable = .yes
        await expectNames(keychain, item, query, ["synced"], "a read of synchronizable items")
        query.synchronizable = .any
        await expectNames(keychain, item, query, ["local", "synced"], "a read of any")
        let presence = try! AccessControl(protection: .whenUnlocked, flags: .userPresence)
        await expectFailure(item, .param, "a synchronizable item with an access control") {
            try await keychain.add(
                AddRequest(
                    service: "api", account: "x", synchronizable: true, accessControl: presence, data: Self.value("x")),
                context: nil)
        }
        await expectFailure(item, .param, "a synchronizable ThisDeviceOnly item") {
            try await keychain.add(
                AddRequest(
                    service: "api", account: "y", synchronizable: true, protection: .whenUnlockedThisDeviceOnly,
                    data: Self.value("y")), context: nil)
        }
    }

    func checkUpdate(_ keychain: any KeychainAccess) async {
        let item = Case.update
        await add(keychain, item, account: "a", name: "1", service: "s1")
        await add(keychain, item, account: "a", name: "2", service: "s2")
        await add(keychain, item, account: "b", name: "3", service: "s3")
        // A collision anywhere rolls the whole update back.
        await expectFailure(item, .duplicateItem, "renaming two items to one identity") {
            try await keychain.update(ItemQuery(account: "a"), changes: ItemChanges(service: "s3"), context: nil)
        }
        await expectFailure(item, .duplicateItem, "renaming two items to one identity (a new one)") {
            try await keychain.update(ItemQuery(account: "a"), changes: ItemChanges(service: "s9"), context: nil)
        }
        await expectNames(keychain, item, ItemQuery(account: "a"), ["1", "2"], "after the refused updates")
        _ = await attempt(item, "updating every match") {
            try await keychain.update(
                ItemQuery(account: "a"), changes: ItemChanges(label: "renamed", data: Self.value("new")), context: nil)
        }
        await expectNames(keychain, item, ItemQuery(account: "a"), ["new", "new"], "after the update")
        let attributes = ItemQuery(account: "a", matchLimit: .all, returnAttributes: true)
        let labels = await attempt(item, "reading the labels") {
            try await keychain.copyMatching(attributes, context: nil).map { $0.attributes?.label }
        }
        expect(labels == ["renamed", "renamed"], item, "the labels after the update are \(labels ?? [])")
        _ = await attempt(item, "moving an item to another account") {
            try await keychain.update(ItemQuery(service: "s3"), changes: ItemChanges(account: "c"), context: nil)
        }
        await expectNames(keychain, item, ItemQuery(service: "s3", account: "c"), ["3"], "after moving the item")
        await expectFailure(item, .itemNotFound, "reading the old account after moving") {
            _ = try await keychain.copyMatching(ItemQuery(account: "b"), context: nil)
        }
    }

    func checkDelete(_ keychain: any KeychainAccess) async {
        let item = Case.delete
        await add(keychain, item, account: "a", name: "1")
        await add(keychain, item, account: "b", name: "2")
        await add(keychain, item, account: "c", name: "3", service: "other")
        _ = await attempt(item, "deleting one account") {
            try await keychain.delete(ItemQuery(service: "api", account: "a"), context: nil)
        }
        await expectNames(keychain, item, ItemQuery(service: "api"), ["2"], "after deleting one")
        _ = await attempt(item, "deleting a service") {
            try await keychain.delete(ItemQuery(service: "api"), context: nil)
        }
        await expectFailure(item, .itemNotFound, "deleting it again") {
            try await keychain.delete(ItemQuery(service: "api"), context: nil)
        }
        await expectNames(keychain, item, ItemQuery(), ["3"], "the other service")
    }

    func checkNotFound(_ keychain: any KeychainAccess) async {
        let item = Case.notFound
        await add(keychain, item, account: "me", name: "v")
        let missing = ItemQuery(service: "api", account: "nobody")
        await expectFailure(item, .itemNotFound, "reading a missing item") {
            _ = try await keychain.copyMatching(missing, context: nil)
        }
        await expectFailure(item, .itemNotFound, "reading the attributes of a missing item") {
            _ = try await keychain.copyMatching(ItemQuery(service: "nothing", returnAttributes: true), context: nil)
        }
        await expectFailure(item, .itemNotFound, "updating a missing item") {
            try await keychain.update(missing, changes: ItemChanges(label: "x"), context: nil)
        }
        await expectFailure(item, .itemNotFound, "deleting a missing item") {
            try await keychain.delete(missing, context: nil)
        }
        await expectNames(keychain, item, ItemQuery(), ["v"], "after the misses")
    }

    func checkInvalidRequests(_ keychain: any KeychainAccess) async {
        let item = Case.invalidRequests
        await add(keychain, item, account: "me", name: "v")
        let limited = ItemQuery(service: "api", matchLimit: .all)
        await expectFailure(item, .param, "an update with a match limit") {
            try await keychain.update(limited, changes: ItemChanges(label: "x"), context: nil)
        }
        await expectFailure(item, .param, "a delete with a match limit") {
            try await keychain.delete(limited, context: nil)
        }
        await expectFailure(item, .param, "an update asking for the value") {
            try await keychain.update(
                ItemQuery(service: "api", returnData: true), changes: ItemChanges(label: "x"), context: nil)
        }
        await expectFailure(item, .param, "a delete with skip") {
            try await keychain.delete(ItemQuery(service: "api", authenticationUI: .skip), context: nil)
        }
        await expectFailure(item, .param, "an add of a deprecated always item") {
            try await keychain.add(
                AddRequest(service: "api", account: "old", protection: .always, data: Self.value("old")), context: nil)
        }
        await expectFailure(item, .noSuchAttr, "a read with an attribute Keygate does not have") {
            _ = try await keychain.copyMatching(
                ItemQuery(service: "api", otherAttributes: ["srvr": "example.com"]), context: nil)
        }
        await expectFailure(item, .noSuchAttr, "an update with an attribute Keygate does not have") {
            try await keychain.update(
                ItemQuery(service: "api"), changes: ItemChanges(otherAttributes: ["desc": "x"]), context: nil)
        }
        await expectFailure(item, .noSuchAttr, "an add with an attribute Keygate does not have") {
            try await keychain.add(
                AddRequest(service: "api", account: "x", data: Self.value("x"), otherAttributes: ["srvr": "e"]),
                context: nil)
        }
        await expectNames(keychain, item, ItemQuery(), ["v"], "after the refused requests")
        let labels = await attempt(item, "reading the label") {
            try await keychain.copyMatching(ItemQuery(service: "api", returnAttributes: true), context: nil)
                .map { $0.attributes?.label }
        }
        expect(labels == [nil], item, "a refused update changed the label")
    }

    func checkEntitlements(_ keychain: any KeychainAccess, groups: [String]) async {
        let item = Case.entitlements
        let other = groups[0] + ".other"
        await add(keychain, item, account: "me", name: "mine")
        await add(keychain, item, account: "me", name: "shared", group: groups[1])
        await expectFailure(item, .missingEntitlement, "adding to a group the caller lacks") {
            try await keychain.add(
                AddRequest(service: "api", account: "me", accessGroup: other, data: Self.value("x")), context: nil)
        }
        await expectFailure(item, .missingEntitlement, "reading from a group the caller lacks") {
            _ = try await keychain.copyMatching(ItemQuery(service: "api", accessGroup: other), context: nil)
        }
        await expectNames(
            keychain, item, ItemQuery(service: "api", accessGroup: groups[0]), ["mine"], "reading the first group")
        await expectNames(keychain, item, ItemQuery(service: "api"), ["mine", "shared"], "reading every group")
        guard let stranger = await otherKeychain(item, groups: [groups[0] + ".stranger"]) else { return }
        await expectFailure(item, .itemNotFound, "another caller reading") {
            _ = try await stranger.copyMatching(ItemQuery(service: "api", returnData: true), context: nil)
        }
        await expectFailure(item, .itemNotFound, "another caller deleting") {
            try await stranger.delete(ItemQuery(service: "api"), context: nil)
        }
        await expectNames(keychain, item, ItemQuery(service: "api"), ["mine", "shared"], "after the stranger")
    }

    func checkNoPromptNoValue(_ keychain: any KeychainAccess) async {
        let item = Case.noPromptNoValue
        await add(keychain, item, account: "plain", name: "p")
        let presence = try! AccessControl(protection: .whenUnlocked, flags: .userPresence)
        _ = await attempt(item, "adding a userPresence item") {
            try await keychain.add(
                AddRequest(service: "api", account: "guarded", accessControl: presence, data: Self.value("g")),
                context: nil)
        }
        var query = ItemQuery(service: "api", matchLimit: .all, returnData: true, authenticationUI: .fail)
        await expectFailure(item, .interactionNotAllowed, "reading a protected item with fail") {
            _ = try await keychain.copyMatching(query, context: nil)
        }
        query.authenticationUI = .skip
        await expectNames(keychain, item, query, ["p"], "reading with skip")
        await expectFailure(item, .itemNotFound, "reading only the protected item with skip") {
            _ = try await keychain.copyMatching(
                ItemQuery(service: "api", account: "guarded", returnData: true, authenticationUI: .skip), context: nil)
        }
        let attributes = await attempt(item, "reading the protected item's attributes") {
            try await keychain.copyMatching(
                ItemQuery(service: "api", account: "guarded", returnAttributes: true, authenticationUI: .fail),
                context: nil)
        }
        expect(
            attributes?.first?.attributes?.accessControl.flags == .userPresence && attributes?.first?.data == nil, item,
            "an attributes read of a protected item did not return its access control alone")
        _ = await attempt(item, "deleting the protected item without a proof") {
            try await keychain.delete(ItemQuery(service: "api", account: "guarded"), context: nil)
        }
        await expectNames(keychain, item, ItemQuery(service: "api"), ["p"], "after the delete")
    }
}
