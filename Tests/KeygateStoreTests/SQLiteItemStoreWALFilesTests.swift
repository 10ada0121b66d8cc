import Foundation
import Glibc
import KeygatePolicy
import KeygateTesting
import Testing

@testable import KeygateStore

/// Issue 10 point 4: a store that opened keeps its `-wal` and `-shm` files when it closes (the
/// next process opens them rather than creating and unlinking both), the WAL emptied by the
/// close's checkpoint; a store refused at open leaves neither.
@Suite struct SQLiteItemStoreWALFilesTests {
    static func size(_ path: String) -> Int? {
        var status = stat()
        return lstat(path, &status) == 0 ? Int(status.st_size) : nil
    }

    @Test func aClosedStoreKeepsAnEmptyWALAndItsItems() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.db"
        do {
            let store = try SQLiteItemStore(path: path)
            try store.insert([Fixtures.item(Fixtures.fields(), "v")])
            #expect((Self.size(path + "-wal") ?? 0) > 0, "the insert is in the WAL while the store is open")
        }
        #expect(Self.size(path + "-wal") == 0, "the last close checkpoints the WAL and empties it")
        #expect(Self.size(path + "-shm") != nil)
        for file in [path + "-wal", path + "-shm"] {
            var status = stat()
            #expect(lstat(file, &status) == 0)
            #expect(status.st_mode & 0o777 == 0o600, "\(file) stays private")
        }
        // Reopened over the kept files (twice: the second open finds what the first close left).
        for _ in 0..<2 {
            let store = try SQLiteItemStore(path: path)
            #expect(Fixtures.text(try store.open(try store.items(matching: Fixtures.all)[0])) == "v")
        }
        #expect(Self.size(path + "-wal") == 0)
    }

    @Test func aStoreRefusedAtOpenLeavesNoWALFiles() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.db"
        try SQLiteItemStore(path: path).insert([Fixtures.item(Fixtures.fields(), "v")])
        unlink(path + "-wal")
        unlink(path + "-shm")
        #expect(throws: KeygateError.self) {
            _ = try SQLiteItemStore(path: path, keyProvider: StaticKeyProvider(key: SecretData.random(count: 32)))
        }
        #expect(Self.size(path + "-wal") == nil)
        #expect(Self.size(path + "-shm") == nil)
    }
}
