import Glibc
public import KeygatePolicy
import KeygateProtocol

/// Hands an accepted SSH agent connection to `keygated`, which serves it itself: the daemon
/// reads the connection's peer (`ssh`, `git`, `ssh-keygen`) from the kernel, so its program
/// grants and audit name that program, not the process that passed the socket.
public enum SSHAgentHandOff {
    /// Passes `connection` (an accepted Unix stream socket; this process keeps its own
    /// descriptor, to close) to the daemon at `socketPath` with the keys of `accessGroups`, a
    /// proof of the requester's terminal standing for `reuseSeconds` (at most 300).
    /// - Throws: the daemon's refusal (`errSecAuthFailed` for a peer of another uid,
    ///   `errSecParam` for a descriptor that is not a connected Unix socket), or
    ///   `errSecNotAvailable` naming the socket when no daemon answers.
    public static func pass(
        _ connection: Int32, to socketPath: String, accessGroups: [String], reuseSeconds: UInt32 = 0,
        clientName: String = "keygate ssh-agent"
    ) throws(KeygateError) {
        let socket = try ClientSocket(path: socketPath, timeout: 10)
        _ = try socket.greet(
            requestID: 1, accessGroups: accessGroups, clientName: clientName, answersPrompts: false, wait: 10,
            replyTimeout: 30)
        try socket.send(
            .sshAgentConnection(accessGroups: accessGroups, reuseSeconds: reuseSeconds), requestID: 2,
            passing: connection)
        switch try ClientSocket.decode(try socket.receive(timeout: 30), path: socketPath) {
        case .done: return
        case let reply:
            if let error = reply.keygateError { throw error }
            throw ClientSocket.unexpected(reply, path: socketPath, for: "answered the hand-off with")
        }
    }
}
