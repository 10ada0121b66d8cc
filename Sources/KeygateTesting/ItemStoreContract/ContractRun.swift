import KeygatePolicy
import KeygateStore

/// One run of ``ItemStoreContract``: the failures found, every error message seen (for the
/// secrecy check), and helpers the duty checks share.
final class ContractRun {
    typealias Duty = ItemStoreContract.Duty

    private(set) var failures: [ItemStoreContract.Failure] = []
    /// Every error message a store threw during the run.
    private(set) var messages: [String] = []
    /// Every record the run read, for the secrecy check.
    var records: [ItemRecord] = []

    init() {}

    func fail(_ duty: Duty, _ message: String) {
        failures.append(ItemStoreContract.Failure(duty: duty, message: message))
    }

    func expect(_ condition: Bool, _ duty: Duty, _ message: @autoclosure () -> String) {
        if !condition { fail(duty, message()) }
    }

    /// A fresh store, or nil after recording why none could be made.
    func freshStore(for duty: Duty, _ makeStore: () throws -> any ItemStore) -> (any ItemStore)? {
        do {
            return try makeStore()
        } catch {
            fail(duty, "could not make a store to check: \(error)")
            return nil
        }
    }

    /// `body`'s result, or nil after recording that `what` failed.
    func attempt<T>(_ duty: Duty, _ what: String, _ body: () throws(KeygateError) -> T) -> T? {
        do {
            return try body()
        } catch {
            messages.append(error.message)
            fail(duty, "\(what) failed: \(error.status) \(error.message)")
            return nil
        }
    }

    /// Records a failure unless `body` throws `status`; a store that changed its items while
    /// failing is reported by the caller's ``expectContents(_:_:_:after:)``.
    @discardableResult
    func expectFailure(
        _ duty: Duty, _ status: KeygateStatus, _ what: String, _ body: () throws(KeygateError) -> Void
    ) -> KeygateError? {
        do {
            try body()
            fail(duty, "\(what) succeeded; it must fail with \(status)")
            return nil
        } catch {
            messages.append(error.message)
            expect(error.status == status, duty, "\(what) failed with \(error.status); it must fail with \(status)")
            return error
        }
    }

    /// Checks that the store holds exactly `expected` (account, value) pairs in this order; a
    /// difference after a failed operation is the fail-closed duty's.
    func expectContents(_ store: any ItemStore, _ duty: Duty, _ expected: [(String, String)], after what: String) {
        guard
            let found = attempt(
                duty, "a search after \(what)",
                { () throws(KeygateError) in
                    try store.items(matching: ContractItems.everything)
                })
        else { return }
        records += found
        let accounts = found.map(\.fields.identity.account)
        guard accounts == expected.map(\.0) else {
            fail(duty, "after \(what) the store holds the accounts \(accounts); expected \(expected.map(\.0))")
            return
        }
        for (record, (account, value)) in zip(found, expected) {
            guard
                let data = attempt(
                    duty, "opening \(account) after \(what)",
                    { () throws(KeygateError) in
                        try store.open(record)
                    })
            else { continue }
            expect(
                ContractItems.text(data) == ContractItems.value(value), duty,
                "after \(what), \(account) opens to a different value than it was stored with")
        }
    }
}
