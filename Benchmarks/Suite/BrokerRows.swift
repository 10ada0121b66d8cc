// The broker: a plain gated read through `keygated` (KeygateClient, one connection) beside the
// same read embedded in process, and `keygate get` through the daemon beside `keygate get`
// embedded, whole process. The daemon is started here, so these rows need root (they say
// "needs root" otherwise); the bench connects as itself (root's own store in the daemon's
// state directory), with `device-state = unlocked` in the daemon's configuration. The daemon
// writes each caller's audit trail durably (one fsync per record, anchored in the caller's
// store), so the embedded side of the read row does the same: embedded mode's default trail.

import Foundation
import Glibc
import Keygate
import KeygateClient
import KeygatePolicy
import KeygateStore

/// `keygated` beside the given `keygate` binary, else beside this program.
func daemonBinary(keygateBinary: String?) -> String? {
    let beside = [keygateBinary, selfPath].compactMap { $0 }.map {
        URL(fileURLWithPath: $0).deletingLastPathComponent().appendingPathComponent("keygated").path
    }
    return beside.first { access($0, X_OK) == 0 }
}

func brokerRows(_ table: Table, scale: Scale, keygateBinary: String?) async throws {
    table.section("Broker: keygated beside embedded (in-process reads: median of interleaved batches)")
    let readName = "copyMatching 64 B through keygated (KeygateClient, one connection)"
    let getName = "keygate get through keygated (whole process, median of \(scale.processRuns) interleaved runs)"
    guard geteuid() == 0 else {
        table.add(Row(name: readName, ours: "needs root", target: "≤ 150 µs more"))
        table.add(Row(name: getName, ours: "needs root", target: "≤ 1.2×"))
        return
    }
    // Installed like keygate (Installed.swift), also when it is found beside this program.
    guard let daemon = daemonBinary(keygateBinary: keygateBinary).map(installedCopy(of:)) else {
        table.add(Row(name: readName, ours: "keygated not built", target: "≤ 150 µs more"))
        table.add(Row(name: getName, ours: "keygated not built", target: "≤ 1.2×"))
        return
    }
    let directory = temporaryDirectory("broker")
    defer { removeTree(directory) }
    let socket = directory + "/keygated.sock"
    let configuration = directory + "/keygated.conf"
    _ = FileManager.default.createFile(
        atPath: configuration, contents: Data("device-state = unlocked\n".utf8), attributes: [.posixPermissions: 0o600])
    guard
        let child = start(
            [daemon, "--socket", socket, "--state-directory", directory + "/state", "--config", configuration],
            stderrPath: directory + "/daemon.log")
    else { throw KeygateError(.io, "cannot start \(daemon)") }
    defer {
        kill(child.pid, SIGTERM)
        _ = child.wait(timeout: 10, sampleMemory: false)
    }
    let deadline = now() + 10
    while access(socket, F_OK) != 0 {
        guard now() < deadline else {
            let log = (try? String(contentsOfFile: directory + "/daemon.log", encoding: .utf8)) ?? ""
            throw KeygateError(.io, "keygated did not create its socket in 10 s: \(log)")
        }
        usleep(10_000)
    }
    // The same items through the daemon (root's store in its state directory) and in an
    // embedded store: `svc-<i>`, 64 random bytes, group keygate.
    let items = scale.name == "tiny" ? 5 : 200
    let client = try KeygateClient(socketPath: socket, accessGroups: ["keygate"], clientName: "keygate-bench")
    defer { client.close() }
    let embeddedDirectory = directory + "/embedded"
    mkdir(embeddedDirectory, 0o700)
    let embeddedStore = try SQLiteItemStore(path: embeddedDirectory + "/items.db")
    let embedded = Keychain(
        store: embeddedStore, accessGroups: ["keygate"], authenticator: NobodyAuthenticator(),
        auditor: Auditor(
            sink: JSONLinesAuditSink(path: embeddedDirectory + "/audit.jsonl", anchors: embeddedStore),
            isRequired: true))
    for index in 0..<items {
        let request = AddRequest(
            service: "svc-\(index)", account: "bench", accessGroup: "keygate",
            data: SecretData(bytes: (0..<64).map { _ in UInt8.random(in: 0...255) }))
        try await client.add(request)
        try await embedded.add(request)
    }
    func read(_ keychain: any KeychainAccess) -> (Int) async throws -> Void {
        { counter in
            let query = ItemQuery(
                service: "svc-\(spread(counter, over: items))", account: "bench", accessGroup: "keygate",
                returnData: true)
            let found = try await keychain.copyMatching(query, context: nil)
            precondition(found.first?.data?.count == 64, "read failed")
        }
    }
    let reads = 10 * scale.slowReads
    let (ours, base) = try await pair(
        batches: scale.batches, operations: (reads, reads), read(client), read(embedded))
    table.add(
        Row(
            name: readName + " (both write the durable audit trail: one fsync per read)",
            ours: "\(duration(ours)) (+\(duration(max(ours - base, 0))))",
            baselineName: "embedded Keychain, durable trail (embedded default)", baseline: duration(base),
            ratio: ratio(ours, base),
            target: "≤ 150 µs more"))
    // The daemon's round trip alone: `status` touches neither the store nor the trail, so this
    // is the wire and the hand-offs between threads, per request.
    var trips: [Double] = []
    for _ in 0..<scale.batches {
        let started = now()
        for _ in 0..<reads { _ = try await client.status() }
        trips.append((now() - started) / Double(reads))
    }
    table.add(
        Row(
            name: "status round trip through keygated (no store, no trail: wire and thread hand-offs)",
            ours: duration(median(trips)), target: "—"))
    try await daemonSignatureRows(table, scale: scale, client: client, directory: directory)
    guard let binary = keygateBinary else {
        table.add(Row(name: getName, ours: "not built (KEYGATE_BIN)", target: "≤ 1.2×"))
        return
    }
    let home = directory + "/home"
    mkdir(home, 0o700)
    var environment = cliEnvironment(home)
    environment["KEYGATE_SOCKET"] = socket
    let viaDaemon = [binary, "--daemon", "get", "-s", "svc-1", "-a", "bench"]
    let local = keygate(
        binary, store: embeddedDirectory + "/items.db", trail: embeddedDirectory + "/audit.jsonl",
        ["--embedded", "get", "-s", "svc-1", "-a", "bench"])
    let medians = interleavedMedianRuns([(viaDaemon, environment), (local, environment)], runs: scale.processRuns)
    guard let daemonGet = medians[0], let embeddedGet = medians[1] else {
        let failed = medians[0] == nil ? "daemon" : "embedded"
        table.add(Row(name: getName, ours: "failed (\(failed) get)", target: "≤ 1.2×"))
        return
    }
    table.add(
        Row(
            name: getName, ours: duration(daemonGet),
            baselineName: "keygate get embedded (durable trail: one fsync)", baseline: duration(embeddedGet),
            ratio: ratio(daemonGet, embeddedGet), target: "≤ 1.2×"))
}
