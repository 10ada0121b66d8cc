import Keygate
import KeygatePolicy
import KeygateStore

extension KeychainContractRun {
    func checkCredentialStore(_ keychain: any KeychainAccess, groups: [String]) async {
        let item = Case.credentialStore
        let mine = CredentialStore(keychain: keychain, service: "demo")
        let shared = CredentialStore(keychain: keychain, service: "demo", accessGroup: groups[1])
        let missing = await attempt(item, "reading a missing account") { try await mine.read(account: "me") }
        expect(missing == .some(nil), item, "a missing account read back as a value")
        _ = await attempt(item, "deleting a missing account") { try await mine.delete(account: "me") }
        _ = await attempt(item, "saving") { try await mine.save(Self.value("one"), account: "me") }
        _ = await attempt(item, "saving again") { try await mine.save(Self.value("two"), account: "me") }
        let read = await attempt(item, "reading") { try await mine.read(account: "me") }
        expect(Self.name(read ?? nil) == "two", item, "a second save did not replace the value")
        // Each store acts on its own group only.
        let other = await attempt(item, "reading the shared group") { try await shared.read(account: "me") }
        expect(other == .some(nil), item, "a store for the shared group sees the default group's item")
        _ = await attempt(item, "saving in the shared group") { try await shared.save(Self.value("s"), account: "me") }
        _ = await attempt(item, "deleting") { try await mine.delete(account: "me") }
        let gone = await attempt(item, "reading after delete") { try await mine.read(account: "me") }
        expect(gone == .some(nil), item, "a deleted account still reads back")
        let kept = await attempt(item, "reading the shared group after delete") { try await shared.read(account: "me") }
        expect(Self.name(kept ?? nil) == "s", item, "deleting in one group removed the other group's item")
        // A store with an access control adds protected items: never read without a proof.
        let presence = try! AccessControl(protection: .whenUnlocked, flags: .userPresence)
        let guarded = CredentialStore(keychain: keychain, service: "guarded", accessControl: presence)
        _ = await attempt(item, "saving a protected value") { try await guarded.save(Self.value("g"), account: "me") }
        await expectFailure(item, .interactionNotAllowed, "reading it without a proof") {
            _ = try await keychain.copyMatching(
                ItemQuery(service: "guarded", account: "me", returnData: true, authenticationUI: .fail), context: nil)
        }
        _ = await attempt(item, "deleting the protected value") { try await guarded.delete(account: "me") }
    }
}
