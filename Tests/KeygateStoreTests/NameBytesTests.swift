import KeygatePolicy
import KeygateStore
import Testing

/// Issue 9, point 8: names are bytes, never normalised. Swift's `String ==` calls the NFC and
/// NFD forms of a name equal; Apple's keychain (and SQLite) compare bytes, so both backends
/// must see two items (checked for every backend by `ItemStoreContract`'s primary-key duty).
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
}
