import KeygatePolicy
import KeygateStore
import Testing

/// Issue 9, point 8: names are bytes, never normalised. Swift's `String ==` calls the NFC and
/// NFD forms of a name equal; Apple's keychain (and SQLite) compare bytes, so both backends
/// must see two items.
@Suite struct NameBytesTests {
    static let nfc = "caf\u{E9}"
    static let nfd = "cafe\u{301}"

    @Test func theTwoFormsAreEqualStringsButDifferentBytes() {
        #expect(Self.nfc == Self.nfd, "Swift compares canonically: the trap this test guards")
        #expect(Array(Self.nfc.utf8) != Array(Self.nfd.utf8))
        let one = ItemIdentity(accessGroup: "g", account: Self.nfc, service: "s")
        let other = ItemIdentity(accessGroup: "g", account: Self.nfd, service: "s")
        #expect(one != other)
        #expect(Set([one, other]).count == 2)
    }

    @Test(arguments: Backend.allCases)
    func nfcAndNfdNameTwoItems(_ backend: Backend) throws {
        let (store, _directory) = try backend.make()
        _ = _directory
        try store.insert([Fixtures.item(Fixtures.fields(service: Self.nfc, account: Self.nfd), "composed")])
        try store.insert([Fixtures.item(Fixtures.fields(service: Self.nfd, account: Self.nfd), "decomposed")])
        #expect(try store.items(matching: Fixtures.all).count == 2)
        for (service, value) in [(Self.nfc, "composed"), (Self.nfd, "decomposed")] {
            var filter = Fixtures.all
            filter.service = service
            filter.account = Self.nfd
            let found = try store.items(matching: filter)
            #expect(found.count == 1, "\(backend): \(Array(service.utf8))")
            #expect(found.map { Fixtures.text(try! store.open($0)) } == [value])
            #expect(found.allSatisfy { Array($0.fields.identity.service.utf8) == Array(service.utf8) })
        }
        var other = Fixtures.all
        other.account = Self.nfc
        #expect(try store.items(matching: other).isEmpty, "the account's other form names nothing")
    }
}
