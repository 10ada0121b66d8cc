/// The ``KeygateStore/ItemStore`` backends this package ships, for tests that run on each
/// (`@Test(arguments: Backend.allCases)`); ``TemporaryStore`` makes a fresh store of one.
public enum Backend: String, CaseIterable, Sendable, CustomStringConvertible {
    /// ``KeygateStore/InMemoryItemStore``.
    case inMemory
    /// ``KeygateStore/SQLiteItemStore``, in a temporary directory.
    case sqlite

    /// The case's name, as test reports show it.
    public var description: String { rawValue }
}
