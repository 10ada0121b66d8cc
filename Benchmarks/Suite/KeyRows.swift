// Key items: one P-256 signature through `keygated` (KeygateClient, one connection; the daemon
// writes the use's audit record durably, one fsync) beside libcrypto's own signature in this
// process (the software keeper, no gate, no trail: the floor), and the same signature through
// the embedded Keychain with its durable trail; then `ssh-keygen -Y sign` through
// `keygate ssh-agent` beside the same through OpenSSH's own `ssh-agent` holding a file key,
// whole processes, interleaved.

import Foundation
import Glibc
import Keygate
import KeygateClient
import KeygateKeys
import KeygatePolicy
import KeygateStore

/// The signature rows through the daemon, on `client` (root's store in the bench's daemon).
func daemonSignatureRows(_ table: Table, scale: Scale, client: KeygateClient, directory: String) async throws {
    let name = "one P-256 signature through keygated (KeygateClient; durable audit record: one fsync)"
    let label = "bench-\(getpid())"
    _ = try await client.createKey(NewKeyRequest(type: .p256, label: label, accessGroup: "keygate"))
    let keeper = SoftwareKeyKeeper()
    let local = try keeper.generate(.p256)
    let message = Array(repeating: UInt8(0x5a), count: 64)
    let query = KeyQuery(label: label, accessGroup: "keygate")
    let embeddedDirectory = directory + "/embedded-keys"
    mkdir(embeddedDirectory, 0o700)
    let store = try SQLiteItemStore(path: embeddedDirectory + "/items.db")
    let embedded = Keychain(
        store: store, accessGroups: ["keygate"], authenticator: NobodyAuthenticator(),
        auditor: Auditor(sink: JSONLinesAuditSink(path: embeddedDirectory + "/audit.jsonl", anchors: store)))
    _ = try await embedded.createKey(NewKeyRequest(type: .p256, label: label, accessGroup: "keygate"))
    let signatures = max(scale.slowReads, 4)
    let (daemon, floor) = try await pair(
        batches: scale.batches, operations: (signatures, signatures),
        { _ in _ = try await client.sign(message, algorithm: .ecdsaSignatureMessageX962SHA256, key: query) },
        { _ in
            _ = try keeper.sign(message, algorithm: .ecdsaSignatureMessageX962SHA256, with: local.blob, type: .p256)
        })
    table.add(
        Row(
            name: name, ours: "\(duration(daemon)) (+\(duration(max(daemon - floor, 0))))",
            baselineName: "libcrypto's ECDSA in this process (the floor: no gate, no trail)", baseline: duration(floor),
            ratio: ratio(daemon, floor), target: "≤ 150 µs more"))
    let (viaDaemon, inProcess) = try await pair(
        batches: scale.batches, operations: (signatures, signatures),
        { _ in _ = try await client.sign(message, algorithm: .ecdsaSignatureMessageX962SHA256, key: query) },
        { _ in _ = try await embedded.sign(message, algorithm: .ecdsaSignatureMessageX962SHA256, key: query) })
    table.add(
        Row(
            name: "the same signature through keygated", ours: duration(viaDaemon),
            baselineName: "embedded Keychain.sign, durable trail (one fsync)", baseline: duration(inProcess),
            ratio: ratio(viaDaemon, inProcess), target: "—"))
    try await client.deleteKeys(query)
}

func keyRows(_ table: Table, scale: Scale, keygateBinary: String?) throws {
    table.section("Keys: ssh-keygen -Y sign through an agent (whole process, median of interleaved runs)")
    let name = "ssh-keygen -Y sign through keygate ssh-agent (Ed25519, no proof)"
    guard let binary = keygateBinary else {
        table.add(Row(name: name, ours: "not built (KEYGATE_BIN)", target: "≤ 1.5×"))
        return
    }
    let home = temporaryDirectory("keys")
    defer { removeTree(home) }
    for sub in ["/data", "/config", "/run"] { mkdir(home + sub, 0o700) }
    let environment = cliEnvironment(home)
    guard
        run([binary, "key", "create", "--type", "ed25519", "--label", "bench"], environment: environment)?.status == 0
    else {
        table.add(Row(name: name, ours: "failed (key create)", target: "≤ 1.5×"))
        return
    }
    let ours = home + "/keygate.sock"
    let theirs = home + "/openssh.sock"
    guard let agent = start([binary, "--no-interaction", "ssh-agent", "-a", ours], environment: environment),
        let openssh = start(["/usr/bin/ssh-agent", "-D", "-a", theirs], environment: environment)
    else {
        table.add(Row(name: name, ours: "failed (an agent did not start)", target: "≤ 1.5×"))
        return
    }
    defer {
        for child in [agent, openssh] {
            kill(child.pid, SIGTERM)
            _ = child.wait(timeout: 10, sampleMemory: false)
        }
    }
    let deadline = now() + 10
    while access(ours, F_OK) != 0 || access(theirs, F_OK) != 0, now() < deadline { usleep(10_000) }
    let publicKey = home + "/bench.pub"
    let fileKey = home + "/file-key"
    _ = run(["/bin/sh", "-c", "'\(binary)' key public --label bench > '\(publicKey)'"], environment: environment)
    _ = run(["/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", fileKey], environment: environment)
    var theirEnvironment = environment
    theirEnvironment["SSH_AUTH_SOCK"] = theirs
    _ = run(["/usr/bin/ssh-add", "-q", fileKey], environment: theirEnvironment)
    let message = home + "/message"
    _ = FileManager.default.createFile(atPath: message, contents: Data("a commit to sign\n".utf8))
    func signing(_ key: String, _ socket: String) -> ([String], [String: String]) {
        var env = environment
        env["SSH_AUTH_SOCK"] = socket
        return (["/bin/sh", "-c", "/usr/bin/ssh-keygen -Y sign -n git -f '\(key)' < '\(message)' > /dev/null"], env)
    }
    let medians = interleavedMedianRuns(
        [signing(publicKey, ours), signing(fileKey + ".pub", theirs)], runs: scale.processRuns)
    guard let keygateSign = medians[0], let opensshSign = medians[1] else {
        table.add(
            Row(name: name, ours: "failed (\(medians[0] == nil ? "keygate" : "OpenSSH") signature)", target: "≤ 1.5×"))
        return
    }
    table.add(
        Row(
            name: name + " (audited: one durable record)", ours: duration(keygateSign),
            baselineName: "the same through OpenSSH's ssh-agent with a file key", baseline: duration(opensshSign),
            ratio: ratio(keygateSign, opensshSign), target: "≤ 1.5×"))
}
