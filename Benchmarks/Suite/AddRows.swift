// Adds per second: `Keychain.add` with the durable trail and with no audit, in one process,
// and four processes adding to one store at once (busy retries counted, no write lost),
// beside C seal + INSERT.

import Foundation
import Glibc
import Keygate
import KeygateBenchC
import KeygatePolicy
import KeygateStore

/// A keychain over a new store in `directory`, auditing to its durable trail (or nowhere); with
/// `anchorInterval`, the trail is anchored in the store (as `keygate` and `keygated` do) at
/// that interval.
func addingKeychain(_ directory: String, durable: Bool, anchorInterval: Int? = nil) throws -> Keychain {
    let store = try SQLiteItemStore(path: directory + "/items.db")
    let sink: any AuditSink =
        if !durable {
            NoopAuditSink()
        } else if let anchorInterval {
            JSONLinesAuditSink(path: directory + "/audit.jsonl", anchors: store, anchorInterval: anchorInterval)
        } else {
            JSONLinesAuditSink(path: directory + "/audit.jsonl")
        }
    return Keychain(
        store: store, accessGroups: ["keygate"], authenticator: NobodyAuthenticator(),
        auditor: Auditor(sink: sink, isRequired: true))
}

/// Adds `svc-<tag>-<index>`, a 64-byte value (random: libsodium fills its 64 bytes with one
/// `getrandom`, where `UInt8.random` made one per byte).
func add(_ keychain: Keychain, tag: Int, index: Int) async throws(KeygateError) {
    let value = SecretData.random(count: 64)
    try await keychain.add(
        AddRequest(service: "add-\(tag)-\(index)", account: "bench", accessGroup: "keygate", data: value))
}

func addRows(_ table: Table, scale: Scale) async throws {
    table.section("Adds (new store, 64 B values)")
    let directory = temporaryDirectory("adds")
    defer { removeTree(directory) }
    for name in ["durable", "anchored", "none", "c"] { mkdir(directory + "/" + name, 0o700) }
    let durable = try addingKeychain(directory + "/durable", durable: true)
    // As `keygate` runs it: the trail anchored in the store (an add's record then rides in its
    // item transaction).
    let anchored = try addingKeychain(
        directory + "/anchored", durable: true, anchorInterval: JSONLinesAuditSink.defaultAnchorInterval)
    let none = try addingKeychain(directory + "/none", durable: false)
    guard let baseline = kb_open(directory + "/c/baseline.db") else {
        throw KeygateError(.io, "cannot open the C store")
    }
    defer { kb_close(baseline) }
    let cAdd: (Int) async throws -> Void = { index in
        guard kb_add(baseline, 0, Int64(index)) >= 0 else { throw KeygateError(.io, "C add failed") }
    }
    let (withTrail, c) = try await pair(
        batches: scale.batches, operations: (scale.adds, scale.adds), { try await add(durable, tag: 0, index: $0) },
        cAdd)
    let (withAnchoredTrail, c3) = try await pair(
        batches: scale.batches, operations: (scale.adds, scale.adds), { try await add(anchored, tag: 0, index: $0) },
        { try await cAdd($0 + 2_000_000_000) })
    let (withoutTrail, c2) = try await pair(
        batches: scale.batches, operations: (scale.adds, scale.adds), { try await add(none, tag: 0, index: $0) },
        { try await cAdd($0 + 1_000_000_000) })
    table.add(
        Row(
            name: "Keychain.add, durable file trail (adds/s)", ours: format(1 / withTrail, digits: 0),
            baselineName: "C seal + INSERT", baseline: format(1 / c, digits: 0), ratio: ratio(withTrail, c),
            target: ""))
    table.add(
        Row(
            name: "Keychain.add, durable trail anchored in the store (adds/s)",
            ours: format(1 / withAnchoredTrail, digits: 0), baselineName: "C seal + INSERT",
            baseline: format(1 / c3, digits: 0), ratio: ratio(withAnchoredTrail, c3), target: ""))
    table.add(
        Row(
            name: "Keychain.add, no-op sink (adds/s)", ours: format(1 / withoutTrail, digits: 0),
            baselineName: "C seal + INSERT", baseline: format(1 / c2, digits: 0), ratio: ratio(withoutTrail, c2),
            target: ""))
    table.add(
        Row(
            name: "Keychain.add, durable trail vs none (adds/s)", ours: format(1 / withTrail, digits: 0),
            baselineName: "no-op sink", baseline: format(1 / withoutTrail, digits: 0),
            ratio: ratio(withTrail, withoutTrail), target: ""))
    table.add(
        Row(
            name: "Keychain.add, anchored durable trail vs none (adds/s)",
            ours: format(1 / withAnchoredTrail, digits: 0), baselineName: "no-op sink",
            baseline: format(1 / withoutTrail, digits: 0), ratio: ratio(withAnchoredTrail, withoutTrail),
            target: "≤ 1.5×"))
    try processAdds(table, scale: scale, directory: directory)
}

/// Four processes adding to one store at once, then a count: every acknowledged add is there.
func processAdds(_ table: Table, scale: Scale, directory: String) throws {
    let shared = directory + "/shared"
    mkdir(shared, 0o700)
    // The store and the C database exist before the workers start (no creation race).
    _ = try SQLiteItemStore(path: shared + "/items.db")
    guard let created = kb_open(shared + "/baseline.db") else { throw KeygateError(.io, "cannot create the C store") }
    kb_close(created)
    func fleet(_ mode: String, _ path: String) -> (rate: Double, acknowledged: Int, retries: Int, failed: Bool) {
        let started = now()
        let children = (0..<4).compactMap { tag in
            start(
                [selfPath, "worker", mode, path, "\(tag + 1)", "\(scale.processAdds)"],
                stderrPath: directory + "/worker.log")
        }
        let results = children.map { $0.wait() }
        let seconds = now() - started
        var acknowledged = 0
        var retries = 0
        for result in results {
            let numbers = result.output.split(separator: " ").compactMap {
                Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            if numbers.count == 2 {
                acknowledged += numbers[0]
                retries += numbers[1]
            }
        }
        return (
            Double(acknowledged) / seconds, acknowledged, retries,
            results.count != 4 || results.contains { $0.status != 0 }
        )
    }
    let ours = fleet("add-keygate", shared)
    let c = fleet("add-c", shared + "/baseline.db")
    let stored = try SQLiteItemStore(path: shared + "/items.db").items(matching: ItemFilter(accessGroups: ["keygate"]))
        .count
    guard let reopened = kb_open(shared + "/baseline.db") else { throw KeygateError(.io, "cannot reopen the C store") }
    let cStored = Int(kb_count(reopened))
    kb_close(reopened)
    let lost = stored != ours.acknowledged || cStored != c.acknowledged || ours.failed || c.failed
    table.add(
        Row(
            name: "4 processes adding to one store (adds/s, \(ours.retries) / \(c.retries) busy retries, "
                + "stored \(stored)/\(ours.acknowledged) and \(cStored)/\(c.acknowledged) acknowledged)",
            ours: format(ours.rate, digits: 0), baselineName: "C seal + INSERT, 4 processes",
            baseline: format(c.rate, digits: 0), ratio: ratio(c.rate, ours.rate),
            target: lost ? "**LOST WRITES**" : "no lost write"))
    if lost { lostWrites = true }
}

/// Set when a multi-process row found fewer items than were acknowledged: the run fails.
nonisolated(unsafe) var lostWrites = false

/// `keygate-bench worker add-keygate DIR TAG COUNT` / `worker add-c DB TAG COUNT`: adds COUNT
/// items, retrying an add that failed on a busy store (counted); prints "acknowledged retries".
func addWorker(_ mode: String, path: String, tag: Int, count: Int) async -> Int32 {
    var acknowledged = 0
    var retries = 0
    if mode == "add-c" {
        guard let store = kb_open(path) else { return 1 }
        for index in 0..<count {
            let result = kb_add(store, Int64(tag), Int64(index))
            if result >= 0 {
                acknowledged += 1
                retries += Int(result)
            }
        }
        kb_close(store)
    } else {
        guard let keychain = try? addingKeychain(path, durable: true) else { return 1 }
        for index in 0..<count {
            for attempt in 0..<20 {
                do {
                    try await add(keychain, tag: tag, index: index)
                    acknowledged += 1
                    break
                } catch  where error.status == .duplicateItem && attempt > 0 {
                    // An earlier attempt that reported a failure had in fact written it.
                    acknowledged += 1
                    break
                } catch {
                    FileHandle.standardError.write("worker \(tag): add \(index), attempt \(attempt): \(error)\n")
                    retries += 1
                }
            }
        }
    }
    print("\(acknowledged) \(retries)")
    return 0
}
