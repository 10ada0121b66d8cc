import Foundation
import Glibc
import KeygateProtocol
import KeygateTesting
import Testing

/// A stand-in for `keygated` on a socket in a temporary directory: it accepts connections and
/// runs `script` on each one, on a thread of its own, so a test fixes exactly which frames the
/// client sees (a relayed prompt, a reply under the wrong id, a closed connection). Every read
/// has a deadline.
final class ScriptedDaemon: @unchecked Sendable {
    let directory: TemporaryDirectory
    let path: String
    private let listener: Int32
    private let done = DispatchSemaphore(value: 0)
    private let connections: Int

    /// Listens and serves `connections` connections with `script`, one after another;
    /// `challenges`: send each connection a challenge first, as keygated does (false: behave as a
    /// daemon of protocol 1, which waits for hello).
    init(connections: Int = 1, challenges: Bool = true, script: @escaping @Sendable (Peer) throws -> Void) throws {
        directory = try TemporaryDirectory()
        path = directory.path + "/d.sock"
        self.connections = connections
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.listener = listener
        let bound = UnixSocketAddress(path: path)?.bind(listener) ?? -1
        try #require(bound == 0 && listen(listener, 4) == 0, "cannot listen on \(path): errno \(errno)")
        let done = done
        let thread = Thread {
            for _ in 0..<connections {
                let fd = accept(listener, nil, nil)
                guard fd >= 0 else { break }
                let peer = Peer(fd: fd)
                do {
                    // As keygated does: the daemon speaks first.
                    if challenges { try peer.send(.challenge(nonce: peer.nonce), id: 0) }
                    try script(peer)
                } catch {
                    Issue.record("scripted daemon: \(error)")
                }
                peer.close()
            }
            // A connection beyond the script is refused at once rather than left waiting for a
            // hello reply until the client's reply timeout.
            shutdown(listener, Int32(SHUT_RDWR))
            done.signal()
        }
        thread.start()
    }

    /// Waits (up to 10 s) until every scripted connection has finished.
    func finish() {
        #expect(done.wait(timeout: .now() + 10) == .success, "the scripted daemon did not finish in 10 s")
    }

    deinit { Glibc.close(listener) }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The daemon's end of one connection.
    final class Peer: @unchecked Sendable {
        let fd: Int32
        private var decoder = FrameDecoder()
        private var pending: [Frame] = []
        private var closed = false

        /// The nonce of this connection's challenge (sent before the script runs).
        let nonce = ChallengeNonce.fresh()

        init(fd: Int32) { self.fd = fd }

        func close() {
            guard !closed else { return }
            closed = true
            Glibc.close(fd)
        }

        func send(_ message: Message, id: UInt32) throws {
            let bytes = try message.frame(requestID: id).encoded()
            let written = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written == bytes.count else { throw Failure(description: "send failed") }
        }

        /// The next message and its id, waiting at most `timeout` seconds.
        func receive(timeout: Int32 = 10) throws -> (id: UInt32, message: Message) {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while pending.isEmpty {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, timeout * 1000) > 0 else { throw Failure(description: "nothing came") }
                let count = recv(fd, &buffer, buffer.count, 0)
                guard count > 0 else { throw Failure(description: "the client closed the connection") }
                pending += try decoder.append(buffer[0..<count])
            }
            let frame = pending.removeFirst()
            return (frame.requestID, try Message(frame))
        }

        /// True when another frame arrives within `milliseconds` (a client that pipelined).
        func more(within milliseconds: Int32) -> Bool {
            if !pending.isEmpty { return true }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            return poll(&poller, 1, milliseconds) > 0
        }

        /// Reads hello and answers it.
        func greet() throws {
            let hello = try receive()
            guard case .hello(_, _, _, _, let challenge, _) = hello.message else {
                throw Failure(description: "expected hello")
            }
            guard challenge == nonce else { throw Failure(description: "hello does not echo the challenge") }
            try send(.helloReply(version: FrameLimits.version, daemonVersion: "scripted"), id: hello.id)
        }
    }
}
