// Gated reads through `Keychain.copyMatching` with each audit mode, and direct
// `SQLiteItemStore` reads, beside the C baseline (sqlite3 point select + XChaCha20-Poly1305
// open of the same shape of row), at each store size, for a 64 B and a 4 KiB item.

import Foundation
import Glibc
import Keygate
import KeygateBenchC
import KeygatePolicy
import KeygateStore

/// Answers every prompt with "nobody to ask": the benchmark's items need none.
struct NobodyAuthenticator: Authenticator {
    func authenticate(_ requirement: Requirement, prompt: String, context: AuthenticationContext) async
        -> AuthenticationOutcome
    { .unavailable("benchmark") }
}

/// The C baseline's database, opened once.
final class Baseline {
    let handle: OpaquePointer
    private var buffer = [UInt8](repeating: 0, count: 8192)

    init(path: String) throws {
        guard let handle = kb_open(path) else { throw KeygateError(.io, "cannot open \(path)") }
        self.handle = handle
    }

    deinit { kb_close(handle) }

    /// One point select + open; traps when the row is missing (a broken fixture).
    func read(_ index: Int, large: Bool) {
        let length = buffer.withUnsafeMutableBufferPointer {
            kb_read(handle, Int64(index), large ? 1 : 0, $0.baseAddress, $0.count)
        }
        precondition(length == (large ? 4096 : 64), "baseline read failed")
    }
}

func readRows(_ table: Table, scale: Scale) async throws {
    for items in scale.readStores {
        let fixture = try StoreFixture.make(items: items, large: scale.largeItems)
        let store = try SQLiteItemStore(path: fixture.store)
        let baseline = try Baseline(path: fixture.baseline)
        let trails = temporaryDirectory("trails")
        defer { removeTree(trails) }
        let label = grouped(items)
        table.section("Gated read, \(label) items (copyMatching, embedded)")
        for large in [false, true] {
            let size = large ? "4 KiB" : "64 B"
            let count = large ? scale.largeItems : items
            let service = large ? "big-" : "svc-"
            func read(_ keychain: Keychain) -> (Int) async throws -> Void {
                { counter in
                    let query = ItemQuery(
                        service: service + "\(spread(counter, over: count))", account: "bench",
                        accessGroup: "keygate", returnData: true)
                    let found = try await keychain.copyMatching(query)
                    precondition(found.first?.data?.count == (large ? 4096 : 64), "read failed")
                }
            }
            let cRead: (Int) async throws -> Void = { baseline.read(spread($0, over: count), large: large) }
            // Reads per batch: slowReads × the factor. Group commit's batch spans ~19 flushes (of
            // 64 records), so where the background flushes fall in it no longer moves its mean.
            let modes: [(String, any AuditSink, Int, String)] = [
                (
                    "durable file trail (default)",
                    JSONLinesAuditSink(path: trails + "/durable-\(size).jsonl"), 1, "≤ 3× C"
                ),
                (
                    "group commit (64 records)",
                    JSONLinesAuditSink(path: trails + "/group-\(size).jsonl", durability: .groupCommit(records: 64)),
                    20, "≤ 3× C"
                ),
                ("in-memory sink", InMemoryAuditSink(), 20, ""),
                ("no-op sink", NoopAuditSink(), 20, ""),
            ]
            var figures: [String: Double] = [:]
            for (mode, sink, factor, target) in modes {
                let keychain = Keychain(
                    store: store, accessGroups: ["keygate"], authenticator: NobodyAuthenticator(),
                    auditor: Auditor(sink: sink, isRequired: true))
                let reads = scale.slowReads * factor
                let (ours, c) = try await pair(
                    batches: scale.batches, operations: (reads, max(reads, 20 * scale.slowReads)), read(keychain), cRead
                )
                figures[mode] = ours
                table.add(
                    Row(
                        name: "copyMatching \(size), \(mode)", ours: duration(ours),
                        baselineName: "C select + open", baseline: duration(c), ratio: ratio(ours, c), target: target))
            }
            if let memory = figures["in-memory sink"], let none = figures["no-op sink"] {
                table.add(
                    Row(
                        name: "copyMatching \(size), in-memory sink vs no-op sink", ours: duration(memory),
                        baselineName: "no-op sink", baseline: duration(none), ratio: ratio(memory, none),
                        target: "≤ 1.3×"))
            }
            let direct: (Int) async throws -> Void = { counter in
                let filter = ItemFilter(
                    accessGroups: ["keygate"], service: service + "\(spread(counter, over: count))", account: "bench")
                guard let record = try store.items(matching: filter).first else { fatalError("item missing") }
                let value = try store.open(record)
                precondition(value.count == (large ? 4096 : 64), "read failed")
            }
            let reads = 20 * scale.slowReads
            let (ours, c) = try await pair(batches: scale.batches, operations: (reads, reads), direct, cRead)
            table.add(
                Row(
                    name: "SQLiteItemStore read \(size) (direct)", ours: duration(ours),
                    baselineName: "C select + open", baseline: duration(c), ratio: ratio(ours, c), target: "≤ 1.3× C"))
        }
    }
}

/// Seconds per operation of `ours` and `baseline`, measured in interleaved batches (A B A B
/// …, so background load hits both alike) after one warm-up batch; the median batch is kept.
func pair(
    batches: Int, operations: (Int, Int), _ ours: (Int) async throws -> Void,
    _ baseline: (Int) async throws -> Void
) async throws -> (Double, Double) {
    var samples: ([Double], [Double]) = ([], [])
    var counter = 0
    for batch in 0...batches {
        for side in 0..<2 {
            let count = side == 0 ? operations.0 : operations.1
            let start = now()
            for _ in 0..<count {
                try await (side == 0 ? ours : baseline)(counter)
                counter &+= 1
            }
            let each = (now() - start) / Double(count)
            // Batch 0 warms the caches up and is not kept (unless it is the only one).
            if batch > 0 || batches == 0 {
                if side == 0 { samples.0.append(each) } else { samples.1.append(each) }
            }
        }
    }
    return (median(samples.0), median(samples.1))
}
