import Foundation
import Glibc
import KeygatePolicy
import KeygateProtocol
import Testing

/// What the daemon knows of a caller (its pid, executable, session) is the process that opened
/// the connection, read at accept: so only that process may speak on it, and its executable
/// counts for a grant only when its path means what it means to the daemon.
@Suite struct ConnectionOwnerTests {
    /// A connection handed to another process (a child that inherited it, while the opener
    /// went on to exec a granted program): the other process's bytes end the connection with
    /// errSecBadReq; the same bytes from the opener are served.
    @Test func bytesFromAnotherProcessThanTheOpenerEndTheConnection() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        let handed = try daemon.connect()
        let hello = try handed.hello(group: "g", client: "owner").frame(requestID: 1).encoded()
        let frameFile = daemon.directory + "/hello.frame"
        #expect(FileManager.default.createFile(atPath: frameFile, contents: Data(hello)))
        let status = try Self.run(["/bin/sh", "-c", "cat '\(frameFile)' >&3"], socket: handed.fd)
        #expect(status == 0)
        let refusal = try #require(handed.receive(), "no error frame for another process's bytes")
        #expect(refusal.id == 0)
        #expect(refusal.message.keygateError?.status.rawValue == -909)
        #expect(handed.closedByPeer(within: 5))

        // The opener's own bytes, the same ones: served.
        let own = try daemon.connect()
        #expect(own.send(try own.hello(group: "g", client: "owner").frame(requestID: 1).encoded()))
        let reply = try #require(own.receive())
        guard case .helloReply = reply.message else {
            Issue.record("expected helloReply, got \(reply.message)")
            return
        }
    }

    /// A caller in a mount namespace of its own (where any file can be mounted at a granted
    /// program's path) gets no grant by its executable's path; the same program in the daemon's
    /// namespace is granted.
    @Test func aCallerInAnotherMountNamespaceMatchesNoProgramGrant() throws {
        let probe = GrantTests.probeExecutable
        let policy = try GrantTests.PolicyFile("grant access-group \"probe.group\" to program \"\(probe)\"\n")
        let daemon = try DaemonFixture(config: "policies = \(policy.path)\n")
        try daemon.start()
        #expect(try daemon.probe(as: DaemonFixture.userA, "add", "api", "me", "v").lines == ["ok"])
        let user = "\(DaemonFixture.userA)"
        let unshared = try daemon.run(
            as: 0, "/usr/bin/unshare",
            [
                "--mount", "--propagation", "private", "/usr/bin/setpriv", "--reuid=\(user)", "--regid=\(user)",
                "--clear-groups", probe, daemon.socket, "get", "api", "me",
            ])
        #expect(unshared.status == 1, "\(unshared.output)")
        #expect(unshared.output.hasPrefix("error -34018"), "\(unshared.output)")
    }

    /// Runs `arguments` with `socket` as its descriptor 3 and waits: its exit status.
    static func run(_ arguments: [String], socket: Int32) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, socket, 3)
        var vector: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in vector { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, &vector, environ)
        try #require(spawned == 0, "posix_spawn failed: \(spawned)")
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status >> 8) & 0xff
    }
}
