import Foundation
import Glibc
import Keygate
import KeygateClient
import KeygatePolicy
import KeygateStore
import Testing

/// The daemon's per-request hand-offs (issue 15's broker rows): a plain request runs on the
/// thread that read it, from start to reply. Its facade call used to hop to the Swift
/// concurrency pool and back, and later to a second, per-connection request thread (a
/// semaphore wake-up per request); now the connection has one thread, and the call's task
/// prefers an executor that thread drains itself.
@Suite struct RequestThreadTests {
    /// The threads of process `pid` now.
    static func threads(of pid: Int32) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").count
    }

    @Test func plainRequestsRunOnTheConnectionsOneThreadOnly() async throws {
        let daemon = try ClientContractTests.daemon()
        let pid = try #require(daemon.process?.processIdentifier)
        let before = try Self.threads(of: pid)
        let client = try KeygateClient(socketPath: daemon.socket, accessGroups: ["g"], replyTimeout: 30)
        defer { client.close() }
        try await client.add(AddRequest(service: "s", account: "a", data: SecretData("v")), context: nil)
        let query = ItemQuery(service: "s", account: "a", returnData: true)
        for _ in 0..<50 {
            let found = try await client.copyMatching(query, context: nil)
            #expect(found.count == 1 && found.first?.data == SecretData("v"))
        }
        try await client.update(
            ItemQuery(service: "s", account: "a"), changes: ItemChanges(data: SecretData("w")), context: nil)
        #expect(try await client.copyMatching(query, context: nil).first?.data == SecretData("w"))
        // The connection's one thread: no request thread, no concurrency-pool thread.
        #expect(try Self.threads(of: pid) == before + 1, "\(daemon.log)")
        client.close()
        #expect(daemon.isRunning)
    }
}
