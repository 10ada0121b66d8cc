import Foundation
import Glibc
import KeygateTesting
import Synchronization

/// A Unix socket that plays a bus from a script, for the handshake's edge cases: it accepts one
/// connection, reads what the client sends until that contains `until` (or 2 s pass), keeps it,
/// then writes each chunk of `replies` in turn (`pause` seconds apart) and leaves the
/// connection open until the client closes it. Its socket lives in a directory of its own; its
/// deinit ends a wait for a connection and removes the directory.
final class ScriptedBus {
    let path: String
    private let directory: TemporaryDirectory
    private let listener: Int32
    private let log = Log()

    /// What the serving thread saw; the thread holds this, not the bus, so the bus's deinit runs.
    private final class Log: Sendable {
        let received = Mutex<[UInt8]>([])
        let connected = Mutex(false)
        let finished = DispatchSemaphore(value: 0)
    }

    init(until: String, replies: [[UInt8]], pause: Double = 0.02) throws {
        directory = try TemporaryDirectory()
        let path = directory.path + "/scripted"
        self.path = path
        let listener = try listeningUnixSocket(path: path, backlog: 4)
        self.listener = listener
        let marker = Array(until.utf8)
        let log = self.log
        Thread {
            defer { log.finished.signal() }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            defer { close(connection) }
            log.connected.withLock { $0 = true }
            var bytes: [UInt8] = []
            let deadline = Date().addingTimeInterval(2)
            while bytes.firstRange(of: marker) == nil && Date() < deadline {
                var poll = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
                guard Glibc.poll(&poll, 1, 50) > 0 else { continue }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                if count <= 0 { break }
                bytes += chunk[0..<count]
            }
            log.received.withLock { $0 = bytes }
            for (index, reply) in replies.enumerated() {
                if index > 0 { Thread.sleep(forTimeInterval: pause) }
                _ = reply.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            // Until the client hangs up.
            var byte: UInt8 = 0
            while recv(connection, &byte, 1, 0) > 0 {}
        }.start()
    }

    /// What the client had sent before the first reply went out (after ``waitUntilDone()``).
    var receivedBeforeReplying: [UInt8] { log.received.withLock { $0 } }

    /// Whether a client has connected.
    var wasConnectedTo: Bool { log.connected.withLock { $0 } }

    /// Waits (at most 10 s) until the connection has ended.
    func waitUntilDone() { _ = log.finished.wait(timeout: .now() + 10) }

    deinit {
        // Wakes an accept still waiting (close alone does not).
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// A little-endian method return to call `serial` carrying one variant holding the boolean
    /// `value`: logind's answer to `Get(…, "LockedHint")`.
    static func lockedHintReply(serial: UInt32, value: Bool) -> [UInt8] {
        func u32(_ number: UInt32) -> [UInt8] { withUnsafeBytes(of: number.littleEndian) { Array($0) } }
        // Header fields: REPLY_SERIAL (5, "u") at 16, SIGNATURE (8, "g") = "v" at 24; they end at 31.
        let fields: [UInt8] =
            [5, 1, UInt8(ascii: "u"), 0] + u32(serial) + [8, 1, UInt8(ascii: "g"), 0, 1, UInt8(ascii: "v"), 0]
        let body: [UInt8] = [1, UInt8(ascii: "b"), 0, 0] + u32(value ? 1 : 0)
        let header: [UInt8] =
            [UInt8(ascii: "l"), 2, 0, 1] + u32(UInt32(body.count)) + u32(1) + u32(UInt32(fields.count))
        return header + fields + [0] + body
    }
}
