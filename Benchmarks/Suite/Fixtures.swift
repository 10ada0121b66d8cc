// The stores and trails the benchmarks read, built once and cached under .build/bench-cache
// (each directory gets a `ready` file when complete; delete the directory to rebuild).
//
// The fast path: a Keygate store is filled through `SQLiteItemStore.insert` in batches of
// 10,000 items, one transaction each (properly sealed rows, no audit), and the C baseline's
// database in one C transaction. Keygate's 1M-item store takes well under a minute this way,
// where `Keychain.add` one item at a time would take hours.

import Foundation
import Glibc
import Keygate
import KeygateBenchC
import KeygatePolicy
import KeygateStore

/// The cache directory, `$KEYGATE_BENCH_CACHE` or `.build/bench-cache` (0700).
let cacheRoot: String = {
    let root =
        ProcessInfo.processInfo.environment["KEYGATE_BENCH_CACHE"]
        ?? (FileManager.default.currentDirectoryPath + "/.build/bench-cache")
    mkdir(root, 0o700)
    return root
}()

/// A store of `items` 64-byte items (`svc-<i>`, account `bench`, group `keygate`) and
/// `large` 4 KiB items (`big-<i>`), with the C baseline's database of the same rows beside it.
struct StoreFixture {
    let directory: String
    let items: Int
    let large: Int
    /// Keygate's database (its key beside it, `items.db.key`).
    var store: String { directory + "/items.db" }
    /// The C baseline's database.
    var baseline: String { directory + "/baseline.db" }

    /// The fixture, built when missing.
    static func make(items: Int, large: Int) throws -> StoreFixture {
        let fixture = StoreFixture(directory: cacheRoot + "/store-v1-\(items)-\(large)", items: items, large: large)
        guard access(fixture.directory + "/ready", F_OK) != 0 else { return fixture }
        removeTree(fixture.directory)
        mkdir(fixture.directory, 0o700)
        FileHandle.standardError.write("bench: building the \(grouped(items))-item stores (cached)…\n")
        try fill(fixture.store, items: items, large: large)
        guard kb_create(fixture.baseline, Int64(items), Int64(large)) == 0 else {
            throw KeygateError(.io, "cannot build the C baseline's database")
        }
        _ = FileManager.default.createFile(atPath: fixture.directory + "/ready", contents: nil)
        return fixture
    }

    /// Copies Keygate's database and key to a new private directory in `parent` (for runs
    /// that write, such as the CLI's audit anchor); returns the directory.
    func copy(in parent: String = "/tmp") throws -> String {
        let directory = temporaryDirectory("store", in: parent)
        for name in ["items.db", "items.db.key"] {
            try FileManager.default.copyItem(atPath: self.directory + "/" + name, toPath: directory + "/" + name)
        }
        return directory
    }

    private static func fill(_ path: String, items: Int, large: Int) throws {
        let store = try SQLiteItemStore(path: path)
        let control = try AccessControl(protection: .default)
        let time = Timestamp(seconds: 1_800_000_000)
        func item(_ service: String, bytes: Int) -> NewItem {
            let identity = ItemIdentity(accessGroup: "keygate", account: "bench", service: service)
            let fields = ItemFields(identity: identity, accessControl: control, created: time, modified: time)
            return NewItem(fields: fields, data: SecretData(bytes: (0..<bytes).map { _ in UInt8.random(in: 0...255) }))
        }
        var batch: [NewItem] = []
        for index in 0..<items + large {
            batch.append(index < items ? item("svc-\(index)", bytes: 64) : item("big-\(index - items)", bytes: 4096))
            if batch.count == 10_000 || index == items + large - 1 {
                try store.insert(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
    }
}

/// An audit trail of `records` records (with its head), written through the durable sink in
/// group commit (a record per call, as `keygate` writes them).
struct TrailFixture {
    let directory: String
    var trail: String { directory + "/audit.jsonl" }

    static func make(records: Int) throws -> TrailFixture {
        let fixture = TrailFixture(directory: cacheRoot + "/trail-v2-\(records)")
        guard access(fixture.directory + "/ready", F_OK) != 0 else { return fixture }
        removeTree(fixture.directory)
        mkdir(fixture.directory, 0o700)
        FileHandle.standardError.write("bench: writing a \(grouped(records))-record audit trail (cached)…\n")
        do {
            let sink = JSONLinesAuditSink(path: fixture.trail, durability: .groupCommit(records: 1_000))
            for index in 0..<records {
                let item = ItemIdentity(accessGroup: "keygate", account: "bench", service: "svc-\(index)")
                try sink.append(
                    AuditEvent(kind: .read, item: item, decision: .allow, reasons: [.classAvailable(.whenUnlocked)]),
                    at: Timestamp(seconds: 1_800_000_000 + Int64(index)))
            }
            sink.flush()
        }
        _ = FileManager.default.createFile(atPath: fixture.directory + "/ready", contents: nil)
        return fixture
    }
}

/// A deterministic spread of indexes over `0..<count`.
@inline(__always)
func spread(_ counter: Int, over count: Int) -> Int {
    Int(UInt64(truncatingIfNeeded: counter) &* 2_654_435_761 % UInt64(count))
}
