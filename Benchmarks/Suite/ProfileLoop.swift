// One kind of read or add in a loop, for a profiler (`perf record`, `valgrind --tool=callgrind`,
// `strace -c`): `keygate-bench worker loop MODE COUNT`, after a warm-up of a tenth of COUNT.
// MODE is one of durable, group, memory, sealing, noop (gated reads of 64 B items through
// `Keychain.copyMatching` with that audit sink), memory-write (the in-memory sink's read and
// one 521-byte append `write` to a file, unsynced: the file sink's system call apart),
// memory-write-sync (the same, that file `fsync`ed every 64 writes on another thread, as group
// commit flushes), direct (`SQLiteItemStore` read), c (the C
// baseline's read), add-durable or add-noop (`Keychain.add`), add-anchored (durable, the trail
// anchored in the store at the default interval, as `keygate` runs it) or add-anchored-each
// (anchored after every record, as before session 19). Reads use the cached 10,000-item
// store; prints the microseconds per operation of the timed part, and on standard error the
// heap allocations per operation (all threads, so a group-commit flush's share included).

import Foundation
import Glibc
import Keygate
import KeygateBenchC
import KeygatePolicy
import KeygateStore
import Synchronization

func profileLoop(mode: String, count: Int) async -> Int32 {
    do {
        let directory = temporaryDirectory("loop")
        defer { removeTree(directory) }
        let operation: (Int) async throws -> Void
        if mode.hasPrefix("add-") {
            let interval: Int? =
                switch mode {
                case "add-anchored": JSONLinesAuditSink.defaultAnchorInterval
                case "add-anchored-each": 1
                default: nil
                }
            let keychain = try addingKeychain(
                directory, durable: mode != "add-noop", anchorInterval: interval)
            operation = { try await add(keychain, tag: 0, index: $0) }
        } else {
            let fixture = try StoreFixture.make(items: 10_000, large: 100)
            let store = try SQLiteItemStore(path: fixture.store)
            let baseline = try Baseline(path: fixture.baseline)
            let sinks: [String: any AuditSink] = [
                "durable": JSONLinesAuditSink(path: directory + "/trail.jsonl"),
                "group": JSONLinesAuditSink(path: directory + "/trail.jsonl", durability: .groupCommit(records: 64)),
                "memory": InMemoryAuditSink(), "memory-write": InMemoryAuditSink(),
                "memory-write-sync": InMemoryAuditSink(), "noop": NoopAuditSink(),
                "sealing": SealingAuditSink(),
            ]
            switch mode {
            case "c": operation = { baseline.read(spread($0, over: 10_000), large: false) }
            case "direct":
                operation = { counter in
                    let filter = ItemFilter(
                        accessGroups: ["keygate"], service: "svc-\(spread(counter, over: 10_000))", account: "bench")
                    guard let record = try store.items(matching: filter).first else { fatalError("item missing") }
                    let value = try store.open(record)
                    precondition(value.count == 64, "read failed")
                }
            default:
                guard let sink = sinks[mode] else {
                    FileHandle.standardError.write("keygate-bench: unknown loop mode \(mode)\n")
                    return 2
                }
                let keychain = Keychain(
                    store: store, accessGroups: ["keygate"], authenticator: NobodyAuthenticator(),
                    auditor: Auditor(sink: sink, isRequired: true))
                // memory-write: the in-memory sink's read plus one append `write` of a trail-sized
                // line to a file of its own (what the file sink's system call costs, apart).
                let descriptor =
                    mode.hasPrefix("memory-write")
                    ? open(directory + "/lines", O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600) : -1
                let line = [UInt8](repeating: UInt8(ascii: "x"), count: 520) + [10]
                // memory-write-sync: and an `fsync` of that file every 64 writes on a queue of its
                // own, as group commit's flusher does (at most one in flight).
                let flusher = mode == "memory-write-sync" ? DispatchQueue(label: "bench.flush") : nil
                operation = { counter in
                    let query = ItemQuery(
                        service: "svc-\(spread(counter, over: 10_000))", account: "bench", accessGroup: "keygate",
                        returnData: true)
                    let found = try await keychain.copyMatching(query)
                    precondition(found.first?.data?.count == 64, "read failed")
                    if descriptor >= 0 {
                        precondition(line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == line.count)
                        if let flusher, counter % 64 == 63 {
                            flusher.sync {}
                            let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
                            flusher.async {
                                fsync(copy)
                                close(copy)
                            }
                        }
                    }
                }
            }
        }
        for counter in 0..<max(count / 10, 1) { try await operation(counter) }
        let allocations = kb_allocations()
        let start = now()
        for counter in 0..<count { try await operation(counter + 1_000_000) }
        let elapsed = now() - start
        let allocated = Double(kb_allocations() - allocations) / Double(max(count, 1))
        print(format(elapsed / Double(max(count, 1)) * 1e6, digits: 2))
        FileHandle.standardError.write("allocations per operation: \(format(allocated, digits: 2))\n")
        return 0
    } catch {
        FileHandle.standardError.write("keygate-bench: \(error)\n")
        return 1
    }
}

/// Seals every record into a chain and keeps only the head: what auditing costs in process
/// without keeping the records (the in-memory sink keeps them all).
final class SealingAuditSink: AuditSink {
    private let head = Mutex(AuditHead(genesis: String(repeating: "0", count: 64)))

    func append(_ event: AuditEvent, at time: Timestamp) throws(KeygateError) -> AuditRecord {
        head.withLock { $0.seal(event, at: time) }
    }
}
