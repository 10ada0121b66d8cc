import Glibc
import KeygatePolicy
import KeygateStore
import KeygateTesting
import Testing

/// The package's own backends run the contract KeygateTesting ships to every backend (the
/// duties listed on `ItemStore`), and the contract is shown to catch a backend breaking each.
@Suite struct ItemStoreContractTests {
    @Test(arguments: Backend.allCases)
    func theBackendHonoursTheContract(_ backend: Backend) async {
        let failures = await ItemStoreContract.check(backend)
        #expect(failures.isEmpty, "\(failures.map(\.description).joined(separator: "\n"))")
    }

    @Test func aFaultlessToyBackendPassesSoEachFaultBelowIsTheOnlyCause() async {
        let failures = await ItemStoreContract.check { ToyItemStore(.none) }
        #expect(failures.isEmpty, "\(failures.map(\.description).joined(separator: "\n"))")
    }

    static let faults: [(ToyItemStore.Fault, ItemStoreContract.Duty)] = [
        (.admitsDuplicates, .primaryKey), (.appliesPartOfABatch, .allOrNothing), (.losesUpdates, .noLostUpdates),
        (.opensMovedValues, .boundValues), (.ignoresTheLimit, .boundedValues),
        (.showsValuesInErrors, .secretsStaySecret),
        (.forgetsTheOrder, .consistentReads), (.confirmsUnwrittenChanges, .participants),
    ]

    @Test(arguments: faults)
    func theContractNamesTheDutyABrokenBackendBreaks(_ fault: ToyItemStore.Fault, _ duty: ItemStoreContract.Duty)
        async
    {
        let failures = await ItemStoreContract.check { ToyItemStore(fault) }
        #expect(failures.contains { $0.duty == duty }, "\(fault): \(failures)")
        #expect(
            failures.filter { $0.duty == duty }.allSatisfy { $0.description.hasPrefix("ItemStore contract, \(duty): ") }
        )
        #expect(
            !failures.contains { $0.description.contains(ItemStoreContract.secretMarker) },
            "a failure never quotes a value")
    }

    @Test func aBackendThatDoesNotMarkADamagedRowFails() async {
        // Nothing is damaged behind the store's back, so no row comes back marked.
        let failures = await ItemStoreContract.check(damagingRows: { _, _ in }, makeStore: { InMemoryItemStore() })
        #expect(failures.map(\.duty) == [.damagedRows])
        #expect(failures.first?.message.contains("expected [intact: intact, damaged: damaged]") == true)
    }

    @Test func aStoreThatCannotBeMadeIsAFailureNotAPass() async {
        struct Unavailable: Error {}
        let failures = await ItemStoreContract.check { () throws -> any ItemStore in throw Unavailable() }
        // Every duty with a check of its own says it was not checked (fail closed is checked
        // within the others; damaged rows only with a hook that damages them).
        let unchecked = Set(ItemStoreContract.Duty.allCases).subtracting([.failClosed, .damagedRows])
        #expect(Set(failures.map(\.duty)) == unchecked)
        #expect(failures.allSatisfy { $0.message.hasPrefix("could not make a store to check") })
    }

    @Test func aTemporaryStoreRemovesItsDirectory() throws {
        var store: TemporaryStore? = try TemporaryStore(.sqlite)
        let path = try #require(store?.databasePath)
        try store?.insert([Fixtures.item(Fixtures.fields(), "one")])
        #expect(access(path, F_OK) == 0)
        store = nil
        #expect(access(path, F_OK) != 0, "the directory went with the fixture")
    }
}
