import Keygate
import KeygatePolicy
import KeygateStore
import KeygateTesting
import Testing

/// SecItem semantics of the gated facade (spec §5–§7), on every backend.
@Suite struct KeychainTests {
    static func add(
        _ fixture: KeychainFixture, service: String = "api", account: String = "me", group: String? = nil,
        flags: AccessControlFlags? = nil, protection: ProtectionClass = .whenUnlocked, sync: Bool = false,
        value: String = "secret-value"
    ) async throws {
        let control = try flags.map { try AccessControl(protection: protection, flags: $0) }
        try await fixture.keychain.add(
            AddRequest(
                service: service, account: account, accessGroup: group, synchronizable: sync,
                protection: control.map(ItemProtection.accessControl) ?? .accessible(protection),
                data: SecretData(value)))
    }

    static func read(_ service: String = "api", account: String? = "me") -> ItemQuery {
        ItemQuery(service: service, account: account, returnData: true)
    }

    /// The status a call fails with, nil when it succeeds; a non-Keygate error fails the test.
    static func status(_ body: () async throws -> Void) async -> KeygateStatus? {
        do {
            try await body()
            return nil
        } catch let error as KeygateError {
            return error.status
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    @Test(arguments: Backend.allCases)
    func duplicateAddIsRefused(_ backend: Backend) async throws {
        // spec §7.2
        let fixture = try KeychainFixture(backend)
        try await Self.add(fixture)
        #expect(await Self.status { try await Self.add(fixture, value: "other") } == .duplicateItem)
        // §6.1 row 2: locked, the class check fails first even though the item exists.
        fixture.device.lock()
        #expect(await Self.status { try await Self.add(fixture) } == .interactionNotAllowed)
    }

    @Test(arguments: Backend.allCases)
    func protectedReadProvesOnceAndReusesTheContext(_ backend: Backend) async throws {
        // spec §4.4: one context passed in is reused across items and calls.
        let fixture = try KeychainFixture(backend)
        try await Self.add(fixture, account: "a", flags: .userPresence, value: "va")
        try await Self.add(fixture, account: "b", flags: .userPresence, value: "vb")
        let context = fixture.context(reuse: 60)
        var query = Self.read(account: nil)
        query.matchLimit = .all
        query.operationPrompt = "Read both tokens"
        let items = try await fixture.keychain.copyMatching(query, context: context)
        #expect(items.compactMap { text($0.data) } == ["va", "vb"])
        #expect(
            fixture.authenticator.prompts == [
                .init(
                    factor: .biometry, text: "Read both tokens", operation: .read,
                    item: ItemIdentity(accessGroup: "group.app", account: "a", service: "api"))
            ], "one prompt, naming the operation and the first item that needed it")
        fixture.clock.advance(seconds: 30)
        _ = try await fixture.keychain.copyMatching(Self.read(account: "a"), context: context)
        #expect(fixture.authenticator.prompts.count == 1, "the proof is reused within the window")
        fixture.clock.advance(seconds: 31)
        _ = try await fixture.keychain.copyMatching(Self.read(account: "a"), context: context)
        #expect(fixture.authenticator.prompts.count == 2, "past the window it is asked again")
    }

    @Test(arguments: Backend.allCases)
    func aReadWithoutItsOwnPromptNamesTheItemsService(_ backend: Backend) async throws {
        // The default prompt is made only when someone is asked: it must still say what is read.
        let fixture = try KeychainFixture(backend)
        try await Self.add(fixture, service: "mail", account: "a", flags: .userPresence, value: "va")
        try await Self.add(fixture, service: "plain", account: "a", value: "vp")
        let plain = try await fixture.keychain.copyMatching(Self.read("plain", account: "a"))
        #expect(plain.compactMap { text($0.data) } == ["vp"])
        #expect(fixture.authenticator.prompts.isEmpty, "a plain item asks no one")
        let items = try await fixture.keychain.copyMatching(Self.read("mail", account: "a"))
        #expect(items.compactMap { text($0.data) } == ["va"])
        #expect(
            fixture.authenticator.prompts == [
                .init(
                    factor: .biometry, text: "Read mail", operation: .read,
                    item: ItemIdentity(accessGroup: "group.app", account: "a", service: "mail"))
            ])
    }

    @Test(arguments: Backend.allCases)
    func cancelAnywhereFailsTheWholeCall(_ backend: Backend) async throws {
        // spec §5: user cancels → the whole call fails with errSecUserCanceled; nothing is lost.
        let fixture = try KeychainFixture(backend)
        try await Self.add(fixture, account: "plain", value: "p")
        try await Self.add(fixture, account: "guarded", flags: .devicePasscode, value: "g")
        fixture.authenticator.enqueue(.cancel, for: .passcode)
        var query = Self.read(account: nil)
        query.matchLimit = .all
        #expect(await Self.status { _ = try await fixture.keychain.copyMatching(query) } == .userCanceled)
        #expect(try fixture.rows() == 2)
        fixture.authenticator.enqueue(.fail, for: .passcode)
        #expect(await Self.status { _ = try await fixture.keychain.copyMatching(query) } == .authFailed)
    }

    @Test(arguments: Backend.allCases)
    func interactionFailAndSkip(_ backend: Backend) async throws {
        let fixture = try KeychainFixture(backend)
        try await Self.add(fixture, account: "plain", value: "p")
        try await Self.add(fixture, account: "guarded", flags: .devicePasscode, value: "g")
        var query = Self.read(account: nil)
        query.matchLimit = .all
        // Fail: the whole call is errSecInteractionNotAllowed (§6.1).
        query.authenticationUI = .fail
        #expect(await Self.status { _ = try await fixture.keychain.copyMatching(query) } == .interactionNotAllowed)
        // Skip: items that need a prompt are left out (§5).
        query.authenticationUI = .skip
        let items = try await fixture.keychain.copyMatching(query)
        #expect(items.compactMap { text($0.data) } == ["p"])
        // Only protected items left: errSecItemNotFound.
        var guarded = Self.read(account: "guarded")
        guarded.authenticationUI = .skip
        #expect(await Self.status { _ = try await fixture.keychain.copyMatching(guarded) } == .itemNotFound)
        #expect(fixture.authenticator.prompts.isEmpty)
        // Skip outside copyMatching is errSecParam.
        var delete = ItemQuery(account: "plain")
        delete.authenticationUI = .skip
        #expect(await Self.status { try await fixture.keychain.delete(delete) } == .param)
    }

    @Test(arguments: Backend.allCases)
    func attributeOnlyQueriesNeverPromptOrReturnTheValue(_ backend: Backend) async throws {
        let fixture = try KeychainFixture(backend)
        try await Self.add(fixture, flags: .biometryCurrentSet)
        fixture.authenticator.setDefault(.cancel, for: .biometry)
        let items = try await fixture.keychain.copyMatching(ItemQuery(service: "api", returnAttributes: true))
        #expect(items.count == 1)
        #expect(items[0].data == nil)
        #expect(items[0].attributes?.identity.account == "me")
        #expect(items[0].attributes?.accessControl.boundEnrollment == fixture.device.enrollment)
        #expect(fixture.authenticator.prompts.isEmpty)
    }

    @Test(arguments: Backend.allCases)
    func enrollmentChangeInvalidatesCurrentSetItemsOnly(_ backend: Backend) async throws {
        // spec §3: biometryCurrentSet is invalidated by an enrollment change; biometryAny survives.
        let fixture = try KeychainFixture(backend)
        try await Self.add(fixture, account: "current", flags: .biometryCurrentSet, value: "c")
        try await Self.add(fixture, account: "any", flags: .biometryAny, value: "a")
        #expect(text(try await fixture.keychain.copyMatching(Self.read(account: "current")).first?.data) == "c")
        fixture.device.enroll("left-thumb")
        #expect(
            await Self.status { _ = try await fixture.keychain.copyMatching(Self.read(account: "current")) }
                == .itemNotFound)
        #expect(try fixture.rows() == 1, "the invalidated item was removed from the backend")
        #expect(text(try await fixture.keychain.copyMatching(Self.read(account: "any")).first?.data) == "a")
    }

    @Test(arguments: Backend.allCases)
    func passcodeRemovalDeletesWhenPasscodeSetItems(_ backend: Backend) async throws {
        // spec §2: removing the passcode deletes akpu items; a new passcode does not bring them back.
        let fixture = try KeychainFixture(backend)
        try await Self.add(fixture, account: "akpu", protection: .whenPasscodeSetThisDeviceOnly, value: "x")
        try await Self.add(fixture, account: "ak", value: "y")
        fixture.device.removePasscode()
        #expect(
            await Self.status { _ = try await fixture.keychain.copyMatching(Self.read(account: "akpu")) }
                == .itemNotFound)
        #expect(
            await Self.status {
                try await Self.add(fixture, account: "akpu2", protection: .whenPasscodeSetThisDeviceOnly)
            } == .notAvailable)
        fixture.device.setPasscode()
        #expect(
            await Self.status { _ = try await fixture.keychain.copyMatching(Self.read(account: "akpu")) }
                == .itemNotFound)
        #expect(try fixture.rows() == 1)
        try await Self.add(fixture, account: "akpu", protection: .whenPasscodeSetThisDeviceOnly, value: "z")
    }

    @Test(arguments: Backend.allCases)
    func entitlements(_ backend: Backend) async throws {
        // spec §6.1: other groups → errSecMissingEntitlement; invisible items → errSecItemNotFound.
        let fixture = try KeychainFixture(backend)
        try await Self.add(fixture, value: "mine")
        try await Self.add(fixture, group: "group.shared", value: "shared")
        #expect(await Self.status { try await Self.add(fixture, group: "group.other") } == .missingEntitlement)
        var query = Self.read()
        query.accessGroup = "group.other"
        #expect(await Self.status { _ = try await fixture.keychain.copyMatching(query) } == .missingEntitlement)
        // The default group is the first one.
        query.accessGroup = "group.app"
        #expect(text(try await fixture.keychain.copyMatching(query).first?.data) == "mine")
        // Another caller with other groups cannot see them at all.
        let stranger = Keychain(
            store: fixture.store, accessGroups: ["group.stranger"], authenticator: fixture.authenticator)
        #expect(await Self.status { _ = try await stranger.copyMatching(Self.read()) } == .itemNotFound)
        #expect(await Self.status { try await stranger.delete(ItemQuery(service: "api")) } == .itemNotFound)
        let nobody = Keychain(store: fixture.store, accessGroups: [], authenticator: fixture.authenticator)
        #expect(await Self.status { _ = try await nobody.copyMatching(Self.read()) } == .missingEntitlement)
    }

    @Test(arguments: Backend.allCases)
    func synchronizableMatching(_ backend: Backend) async throws {
        // spec §7.3: without synchronizable only non-sync items match; any matches both.
        let fixture = try KeychainFixture(backend)
        try await Self.add(fixture, value: "local")
        try await Self.add(fixture, sync: true, value: "synced")
        var query = Self.read()
        query.matchLimit = .all
        #expect(try await fixture.keychain.copyMatching(query).compactMap { text($0.data) } == ["local"])
        query.synchronizable = .yes
        #expect(try await fixture.keychain.copyMatching(query).compactMap { text($0.data) } == ["synced"])
        query.synchronizable = .any
        #expect(try await fixture.keychain.copyMatching(query).count == 2)
        // sync + access control, and sync + ThisDeviceOnly, are errSecParam.
        #expect(await Self.status { try await Self.add(fixture, account: "x", flags: [], sync: true) } == .param)
        #expect(
            await Self.status {
                try await Self.add(fixture, account: "y", protection: .whenUnlockedThisDeviceOnly, sync: true)
            } == .param)
    }

    @Test(arguments: Backend.allCases)
    func matchLimits(_ backend: Backend) async throws {
        let fixture = try KeychainFixture(backend)
        for index in 0..<4 { try await Self.add(fixture, account: "a\(index)", value: "v\(index)") }
        var query = Self.read(account: nil)
        #expect(try await fixture.keychain.copyMatching(query).count == 1, "the default limit is one")
        query.matchLimit = .count(3)
        #expect(try await fixture.keychain.copyMatching(query).count == 3)
        query.matchLimit = .all
        #expect(try await fixture.keychain.copyMatching(query).count == 4)
        query.matchLimit = .count(0)
        #expect(await Self.status { _ = try await fixture.keychain.copyMatching(query) } == .param)
    }

    @Test(arguments: Backend.allCases)
    func invalidQueriesAreParamOrNoSuchAttr(_ backend: Backend) async throws {
        let fixture = try KeychainFixture(backend)
        try await Self.add(fixture)
        let keychain = fixture.keychain
        // §7.4: a match limit or return keys in an update; §7.5: a match limit in a delete.
        var limited = ItemQuery(service: "api")
        limited.matchLimit = .all
        #expect(await Self.status { try await keychain.update(limited, changes: ItemChanges(label: "x")) } == .param)
        #expect(await Self.status { try await keychain.delete(limited) } == .param)
        #expect(
            await Self.status { try await keychain.update(Self.read(), changes: ItemChanges(label: "x")) } == .param)
        // §6.1: a protection class together with an access control cannot be expressed
        // (`ItemProtection` holds one or the other). Unknown attributes:
        #expect(
            await Self.status {
                _ = try await keychain.copyMatching(ItemQuery(service: "api", otherAttributes: ["srvr": "example.com"]))
            } == .noSuchAttr)
        #expect(
            await Self.status {
                try await keychain.update(
                    ItemQuery(service: "api"), changes: ItemChanges(otherAttributes: ["desc": "x"]))
            } == .noSuchAttr)
        // Deprecated always classes are refused for new items.
        #expect(await Self.status { try await Self.add(fixture, account: "old", protection: .always) } == .param)
        #expect(try fixture.rows() == 1, "nothing changed")
    }

    @Test(arguments: Backend.allCases)
    func multiItemUpdateIsAllOrNothing(_ backend: Backend) async throws {
        // spec §7.4: a collision anywhere rolls back the whole update.
        let fixture = try KeychainFixture(backend)
        try await Self.add(fixture, service: "s1", account: "a", value: "1")
        try await Self.add(fixture, service: "s2", account: "a", value: "2")
        try await Self.add(fixture, service: "s3", account: "b", value: "3")
        #expect(
            await Self.status {
                try await fixture.keychain.update(ItemQuery(account: "a"), changes: ItemChanges(service: "s9"))
            } == .duplicateItem)
        var query = ItemQuery(account: "a", returnAttributes: true)
        query.matchLimit = .all
        #expect(
            try await fixture.keychain.copyMatching(query).compactMap { $0.attributes?.identity.service } == [
                "s1", "s2",
            ])
        try await fixture.keychain.update(
            ItemQuery(account: "a"), changes: ItemChanges(label: "renamed", data: SecretData("new")))
        query.returnData = true
        let items = try await fixture.keychain.copyMatching(query)
        #expect(items.map { $0.attributes?.label } == ["renamed", "renamed"])
        #expect(items.compactMap { text($0.data) } == ["new", "new"])
        #expect(
            await Self.status {
                try await fixture.keychain.update(ItemQuery(account: "nobody"), changes: ItemChanges(label: "x"))
            } == .itemNotFound)
    }

    @Test(arguments: Backend.allCases)
    func updateOfAProtectedItemNeedsAProofAndRebinds(_ backend: Backend) async throws {
        let fixture = try KeychainFixture(backend)
        try await Self.add(fixture, flags: .biometryCurrentSet, value: "old")
        fixture.authenticator.enqueue(.cancel, for: .biometry)
        #expect(
            await Self.status {
                try await fixture.keychain.update(
                    ItemQuery(service: "api"), changes: ItemChanges(data: SecretData("x")))
            } == .userCanceled)
        try await fixture.keychain.update(ItemQuery(service: "api"), changes: ItemChanges(data: SecretData("new")))
        #expect(text(try await fixture.keychain.copyMatching(Self.read()).first?.data) == "new")
        // Changing the access control binds it again to the current enrollment.
        fixture.device.enroll("left-index")
        let fresh = try AccessControl(protection: .whenUnlocked, flags: .biometryCurrentSet)
        #expect(
            await Self.status {
                try await fixture.keychain.update(
                    ItemQuery(service: "api"), changes: ItemChanges(protection: .accessControl(fresh)))
            } == .itemNotFound, "the old item was invalidated first")
    }

    @Test(arguments: Backend.allCases)
    func deleteNeedsNoAuthentication(_ backend: Backend) async throws {
        // spec §7.5: odel(true).
        let fixture = try KeychainFixture(backend)
        try await Self.add(fixture, account: "a", flags: .devicePasscode)
        try await Self.add(fixture, account: "b", flags: .biometryCurrentSet)
        fixture.authenticator.setDefault(.cancel, for: .passcode)
        fixture.authenticator.setDefault(.cancel, for: .biometry)
        fixture.device.lock()
        try await fixture.keychain.delete(ItemQuery(service: "api"))
        #expect(fixture.authenticator.prompts.isEmpty)
        #expect(try fixture.rows() == 0)
        #expect(await Self.status { try await fixture.keychain.delete(ItemQuery(service: "api")) } == .itemNotFound)
    }

    @Test(arguments: Backend.allCases)
    func organisationPolicyHook(_ backend: Backend) async throws {
        struct NoDeletes: OrganisationPolicy {
            func review(_ action: PolicyAction, item fields: ItemFields) -> PolicyDecision {
                switch action {
                case .delete:
                    PolicyDecision(reasons: [PolicyReason(ruleID: "no-deletes", action: action, effect: .forbids)])
                case .read:
                    PolicyDecision(reasons: [
                        PolicyReason(
                            ruleID: "passcode-to-read", action: action, effect: .alsoRequires(Requirement([.passcode])))
                    ])
                default: PolicyDecision()
                }
            }
        }
        let fixture = try KeychainFixture(backend, policy: NoDeletes())
        try await Self.add(fixture)
        do {
            try await fixture.keychain.delete(ItemQuery(service: "api"))
            Issue.record("the rule must deny")
        } catch {
            #expect(error.status == .deniedByPolicy)
            #expect(error.message.contains("'no-deletes'"))
        }
        _ = try await fixture.keychain.copyMatching(Self.read())
        #expect(fixture.authenticator.prompts.map(\.factor) == [.passcode], "the rule's requirement was proved")
    }
}
