import KeygateAudit
import KeygatePolicy
import KeygateTesting
import Synchronization
import Testing

@testable import KeygateStore

/// Issue 10 point 1: the anchor is committed without a second `fsync` (`synchronous = NORMAL`),
/// and the connection goes back to `FULL`, so item writes stay as durable as before.
@Suite struct AuditAnchorSynchronousTests {
    private func synchronous(_ store: SQLiteItemStore) throws -> Int64 {
        try store.connection.withLock { (connection: inout SQLiteConnection) throws(KeygateError) -> Int64 in
            let statement = try connection.statement("PRAGMA synchronous")
            defer { statement.reset() }
            _ = try statement.step()
            return statement.integer(0)
        }
    }

    @Test func itemWritesStayFullyDurableAfterAnAnchorIsSaved() throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteItemStore(path: directory.path + "/items.db")
        #expect(try synchronous(store) == 2, "FULL before")
        let head = AuditHead(genesis: String(repeating: "ab", count: 32))
        try store.saveAuditAnchor(head, for: directory.path + "/audit.jsonl")
        #expect(try synchronous(store) == 2, "FULL again after the anchor's commit")
        // Another connection (another process) sees the anchor without this one closing.
        let other = try SQLiteItemStore(path: directory.path + "/items.db")
        #expect(try other.auditAnchor(for: directory.path + "/audit.jsonl") == head)
    }
}
