import Foundation
import Glibc
import Keygate
import KeygateClient
import KeygatePolicy
import KeygateProtocol
import KeygateStore
import KeygateTesting
import Testing

/// KeygateClient against a real keygated: the same KeychainContract the embedded Keychain
/// passes (KeygateTests), and what only the daemon mode has (the caller's status from the
/// kernel, a daemon that dies and comes back).
@Suite struct ClientContractTests {
    /// A daemon with a fixed device state (no logind session in the test process).
    static func daemon() throws -> DaemonFixture {
        let daemon = try DaemonFixture(config: "device-state = unlocked\n")
        try daemon.start()
        return daemon
    }

    @Test func theClientHonoursTheKeychainContractThroughTheDaemon() async throws {
        let daemon = try Self.daemon()
        let socket = daemon.socket
        let failures = await KeychainContract.check { groups in
            try KeygateClient(socketPath: socket, accessGroups: groups, clientName: "contract", replyTimeout: 30)
        }
        #expect(failures.isEmpty, "\(failures.map(\.description).joined(separator: "\n"))\n\(daemon.log)")
        #expect(daemon.isRunning)
    }

    /// An error keeps its cause through the daemon, as `KeychainAccess` promises: a row damaged
    /// on disk is errSecDecode with the condition `damagedItem` (as FacadeCorrectnessTests shows
    /// embedded), so `catch KeygateError.Condition.damagedItem` matches through the client too.
    @Test func anErrorsCauseComesThroughTheDaemon() async throws {
        let daemon = try Self.daemon()
        let client = try KeygateClient(socketPath: daemon.socket, accessGroups: ["g"], replyTimeout: 30)
        try await client.add(AddRequest(service: "api", account: "me", data: SecretData("value")), context: nil)
        let database = daemon.state + "/users/\(getuid())/items.db"
        let edit = Process()
        edit.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        edit.arguments = [
            "-c",
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE items SET accc = 'damaged by a test'\"); c.commit()",
            database,
        ]
        try edit.run()
        edit.waitUntilExit()
        try #require(edit.terminationStatus == 0, "could not edit \(database)")
        var matched = false
        do {
            _ = try await client.copyMatching(ItemQuery(service: "api", account: "me", returnData: true), context: nil)
            Issue.record("a damaged row was read")
        } catch KeygateError.Condition.damagedItem {
            matched = true
        } catch {
            Issue.record("\(error) (cause \(String(describing: error.cause)))")
        }
        #expect(matched, "the cause did not come through the daemon")
    }

    @Test func statusNamesTheCallerAsTheKernelSeesIt() async throws {
        let daemon = try Self.daemon()
        let client = try KeygateClient(socketPath: daemon.socket, accessGroups: ["g"], replyTimeout: 30)
        let status = try await client.status()
        #expect(status.mode == "daemon")
        #expect(status.uid == getuid())
        #expect(status.pid == getpid())
        #expect(status.daemonVersion == client.daemonVersion)
        #expect(!client.daemonVersion.isEmpty)
        try await client.lock()
    }

    @Test func aDaemonThatDiesIsNotAvailableAndACallAfterItsRestartConnectsAgain() async throws {
        let daemon = try Self.daemon()
        let client = try KeygateClient(socketPath: daemon.socket, accessGroups: ["g"], replyTimeout: 30)
        try await client.add(AddRequest(service: "s", account: "a", data: SecretData("kept")), context: nil)
        daemon.stop(signal: SIGKILL)
        let error = await #expect(throws: KeygateError.self) {
            _ = try await client.copyMatching(ItemQuery(service: "s", returnData: true), context: nil)
        }
        #expect(error?.status == .notAvailable)
        #expect(error?.message.contains(daemon.socket) == true)
        try daemon.start()
        let items = try await client.copyMatching(ItemQuery(service: "s", returnData: true), context: nil)
        #expect(items.first?.data == SecretData("kept"))
    }
}
