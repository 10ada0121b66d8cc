import KeygatePolicy
public import KeygateStore

/// The suite every ``KeygateStore/ItemStore`` must pass: one check per duty the protocol's
/// documentation lists, run against fresh stores a backend's test makes.
///
/// A third-party backend proves it honours the protocol from its own test target:
///
/// ```swift
/// @Test func honoursTheItemStoreContract() async {
///     await ItemStoreContract.expectHonoured { try MyItemStore(path: freshPath()) }
/// }
/// ```
///
/// Every value the suite stores contains ``secretMarker``; the suite fails a store that shows
/// it in a description or an error message.
public enum ItemStoreContract {
    /// The text every value stored by the suite contains.
    public static let secretMarker = "kg-contract-secret"

    /// The duties of ``KeygateStore/ItemStore``, in the order its documentation lists them.
    public enum Duty: String, CaseIterable, Sendable, CustomStringConvertible {
        /// At most one item per identity, compared byte for byte, even under concurrent inserts.
        case primaryKey
        /// Inserts, replacements and deletions apply every entry or none.
        case allOrNothing
        /// A replacement of an item another writer changed since it was read fails.
        case noLostUpdates
        /// A row whose access control cannot be trusted is returned marked damaged, and deletable.
        case damagedRows
        /// Searches return exact fields and matching values, in the order items were added.
        case consistentReads
        /// A value opens only with exactly the fields it was stored with.
        case boundValues
        /// No value in a description or an error message.
        case secretsStaySecret
        /// Values over the store's limit are refused with `errSecParam`.
        case boundedValues
        /// A write's participant has its changes in the write's commit, or none of them.
        case participants
        /// Failures are thrown with the right status and never erase data.
        case failClosed

        /// The duty's name as the protocol's documentation spells it.
        public var description: String {
            switch self {
            case .primaryKey: "primary key"
            case .allOrNothing: "all or nothing"
            case .noLostUpdates: "no lost updates"
            case .damagedRows: "damaged rows"
            case .consistentReads: "consistent reads"
            case .boundValues: "bound values"
            case .secretsStaySecret: "secrets stay secret"
            case .boundedValues: "bounded values"
            case .participants: "participants"
            case .failClosed: "fail closed"
            }
        }
    }

    /// One broken duty and what the suite saw.
    public struct Failure: Hashable, Sendable, CustomStringConvertible {
        /// The duty broken.
        public let duty: Duty
        /// What was expected and what happened (never a stored value).
        public let message: String

        /// `ItemStore contract, <duty>: <message>`.
        public var description: String { "ItemStore contract, \(duty): \(message)" }
    }

    /// Runs every check, each on a fresh store from `makeStore`.
    ///
    /// - Parameters:
    ///   - maximumValueLength: the largest value the stores accept (the bounded-values duty
    ///     stores a value of exactly this length and refuses one byte more).
    ///   - damagingRows: makes the access control of an item of a store untrustworthy behind the
    ///     store's back (as someone editing its file would); nil for a backend that keeps nothing
    ///     outside memory, which has no damaged rows to report.
    ///   - makeStore: a fresh, empty store each time it is called.
    /// - Returns: the broken duties; empty when the stores honour the contract.
    public static func check(
        maximumValueLength: Int = ItemLimits.defaultMaximumValueLength,
        damagingRows: ((any ItemStore, ItemID) throws -> Void)? = nil,
        makeStore: () throws -> any ItemStore
    ) async -> [Failure] {
        let run = ContractRun()
        if let store = run.freshStore(for: .primaryKey, makeStore) { run.checkPrimaryKey(store) }
        if let store = run.freshStore(for: .primaryKey, makeStore) { await run.checkConcurrentInserts(store) }
        if let store = run.freshStore(for: .allOrNothing, makeStore) { run.checkAllOrNothing(store) }
        if let store = run.freshStore(for: .noLostUpdates, makeStore) { run.checkNoLostUpdates(store) }
        if let damagingRows, let store = run.freshStore(for: .damagedRows, makeStore) {
            run.checkDamagedRows(store, damage: damagingRows)
        }
        if let store = run.freshStore(for: .consistentReads, makeStore) { run.checkConsistentReads(store) }
        if let store = run.freshStore(for: .boundValues, makeStore) { run.checkBoundValues(store) }
        if let store = run.freshStore(for: .boundedValues, makeStore) {
            run.checkBoundedValues(store, maximum: maximumValueLength)
        }
        if let store = run.freshStore(for: .participants, makeStore) { run.checkParticipants(store) }
        if let store = run.freshStore(for: .secretsStaySecret, makeStore) { run.checkSecretsStaySecret(store) }
        return run.failures
    }

    /// Reports each failure of ``check(maximumValueLength:damagingRows:makeStore:)`` as a test
    /// failure, in Swift Testing or XCTest, whichever is running.
    public static func expectHonoured(
        maximumValueLength: Int = ItemLimits.defaultMaximumValueLength,
        damagingRows: ((any ItemStore, ItemID) throws -> Void)? = nil,
        makeStore: () throws -> any ItemStore, filePath: StaticString = #filePath, line: UInt = #line
    ) async {
        let failures = await check(
            maximumValueLength: maximumValueLength, damagingRows: damagingRows, makeStore: makeStore)
        for failure in failures {
            TestFailure.report(failure.description, filePath: filePath, line: line)
        }
    }
}

extension ItemStoreContract {
    /// Checks a ``TemporaryStore`` of each of this package's backends (SQLite with its rows damaged
    /// through ``TemporaryStore/damageAccessControl(of:)``).
    public static func check(_ backend: Backend) async -> [Failure] {
        await check(
            damagingRows: backend == .sqlite
                ? { store, id in try (store as? TemporaryStore)?.damageAccessControl(of: id) } : nil,
            makeStore: { try TemporaryStore(backend) })
    }

    /// Reports each failure of ``check(_:)`` as a test failure.
    public static func expectHonoured(_ backend: Backend, filePath: StaticString = #filePath, line: UInt = #line)
        async
    {
        for failure in await check(backend) {
            TestFailure.report(failure.description, filePath: filePath, line: line)
        }
    }
}
