import Foundation
import Glibc
import Testing

/// Access groups are decided from the daemon's own grants and the caller's executable as the
/// kernel reports it, never from the group names a client's hello claims.
@Suite struct GrantTests {
    /// Writes `text` as a root-owned policy file (mode `mode`) and removes it when the test ends.
    final class PolicyFile {
        let path = "/tmp/keygated-policy-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).policy"
        init(_ text: String, mode: mode_t = 0o644) throws {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            chmod(path, mode)
        }
        deinit { unlink(path) }
    }

    static let probeExecutable = URL(fileURLWithPath: DaemonFixture.probePath).resolvingSymlinksInPath().path

    @Test func aGroupGrantedToAnotherProgramIsRefusedWhateverTheHelloClaims() throws {
        let policy = try PolicyFile("grant access-group \"probe.group\" to program \"/usr/bin/someone-else\"\n")
        let daemon = try DaemonFixture(config: "policies = \(policy.path)\n")
        try daemon.start()
        let refused = try daemon.probe(as: DaemonFixture.userA, "add", "api", "me", "v")
        #expect(refused.status == 1)
        #expect(refused.lines.first?.hasPrefix("error -34018") == true, "\(refused.output)")
    }

    @Test func aGroupGrantedToTheCallersExecutableIsServed() throws {
        let policy = try PolicyFile("grant access-group \"probe.group\" to program \"\(Self.probeExecutable)\"\n")
        let daemon = try DaemonFixture(config: "policies = \(policy.path)\n")
        try daemon.start()
        #expect(try daemon.probe(as: DaemonFixture.userA, "add", "api", "me", "v").lines == ["ok"])
        #expect(try daemon.probe(as: DaemonFixture.userA, "get", "api", "me").lines == ["v"])
    }

    /// A configured policies path that does not exist stops the daemon, naming it, rather than
    /// running with every grant off.
    @Test func aMissingPoliciesPathRefusesToStart() throws {
        let missing = "/tmp/keygated-policies-\(getpid())-missing"
        let (status, log) = try DaemonFixture.startRefused(config: "policies = \(missing)\n")
        #expect(status == 78)
        #expect(log.contains("\(missing): no such policy directory or file"), "\(log)")
    }

    @Test func policiesOthersCanWriteRefuseToStart() throws {
        let policy = try PolicyFile("grant access-group \"g\" to program \"/usr/bin/x\"\n", mode: 0o666)
        let (status, log) = try DaemonFixture.startRefused(config: "policies = \(policy.path)\n")
        #expect(status == 78)
        #expect(log.contains("\(policy.path): must belong to the daemon's user"), "\(log)")
    }
}
