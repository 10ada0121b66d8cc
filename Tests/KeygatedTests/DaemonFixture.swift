import Foundation
import Glibc
import KeygateProtocol
import Testing

/// A real `keygated` on a socket and state directory in a fresh temporary directory, started
/// as root (the tests fail, never skip, when not root), with clients run as unprivileged uids
/// through `setpriv --reuid/--regid --clear-groups` (no passwd entries needed, nothing to
/// clean up but the processes and the directory).
final class DaemonFixture {
    /// Two uids no account uses; the daemon only needs the numbers.
    static let userA: UInt32 = 61_001
    static let userB: UInt32 = 61_002

    let directory: String
    let socket: String
    let state: String
    let configPath: String?
    private(set) var process: Process?
    private var logCount = 0
    /// The daemon's environment (nil: the test process's), for PAM and NSS wrappers.
    var environment: [String: String]?

    /// Fails the test (never skips) when the test process is not root.
    static func requireRoot() throws {
        try #require(geteuid() == 0, "the broker tests start keygated as root and clients as other uids: run as root")
    }

    /// A fixture whose daemon reads `config` (nil: no --config).
    init(config: String? = nil) throws {
        try Self.requireRoot()
        var template = Array("/tmp/keygated-test-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        try #require(made != nil)
        directory = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        chmod(directory, 0o755)  // clients (other uids) must reach the socket
        socket = directory + "/keygated.sock"
        state = directory + "/state"
        if let config {
            configPath = directory + "/keygated.conf"
            try config.write(toFile: configPath!, atomically: true, encoding: .utf8)
        } else {
            configPath = nil
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    static let binaryDirectory: URL = {
        var directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("keygated").path),
            directory.path != "/"
        {
            directory.deleteLastPathComponent()
        }
        return directory
    }()
    static let daemonPath = binaryDirectory.appendingPathComponent("keygated").path
    static let probePath = binaryDirectory.appendingPathComponent("keygated-probe").path

    /// Starts the daemon and waits (up to 10 s) until its socket exists (a stale socket left by a
    /// killed daemon is removed first unless `keepingSocket`; the daemon then waits for the
    /// socket to answer).
    /// `wrapper`: a command that runs the daemon, given its path and arguments after its own
    /// (a shell that sets a limit first, say).
    func start(keepingSocket: Bool = false, wrapper: [String] = []) throws {
        if !keepingSocket { unlink(socket) }
        var arguments = ["--socket", socket, "--state-directory", state]
        if let configPath { arguments += ["--config", configPath] }
        logCount += 1
        let command = wrapper + [Self.daemonPath] + arguments
        let process = try Self.launch(
            command[0], Array(command.dropFirst()), output: directory + "/daemon-\(logCount).log",
            environment: environment)
        self.process = process
        let deadline = Date().addingTimeInterval(10)
        while access(socket, F_OK) != 0 || (keepingSocket && !answers()) {
            try #require(process.isRunning, "keygated exited: \(log)")
            try #require(Date() < deadline, "keygated did not create its socket in 10 s")
            usleep(10_000)
        }
    }

    /// True when something accepts connections on the socket.
    private func answers() -> Bool { (try? RawConnection(path: socket, quiet: true)) != nil }

    /// The daemon's standard error so far.
    var log: String {
        (try? String(contentsOfFile: directory + "/daemon-\(logCount).log", encoding: .utf8)) ?? ""
    }

    /// Stops the daemon with `signal` and reaps it.
    func stop(signal: Int32 = SIGTERM) {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, signal)
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(5_000) }
        if process.isRunning {
            Issue.record("keygated ignored signal \(signal)")
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        self.process = nil
    }

    /// Whether the daemon is still running.
    var isRunning: Bool { process?.isRunning ?? false }

    struct Result {
        let status: Int32
        let output: String
        var lines: [String] { output.split(separator: "\n").map(String.init) }
    }

    /// Runs `keygated-probe SOCKET arguments…` as `uid` (gid the same, no supplementary groups).
    func probe(as uid: UInt32, _ arguments: String...) throws -> Result {
        try run(as: uid, Self.probePath, [socket] + arguments)
    }

    /// Runs `program arguments…` as `uid`, waiting up to `timeout` seconds.
    func run(as uid: UInt32, _ program: String, _ arguments: [String], timeout: Double = 30) throws -> Result {
        let output = directory + "/run-\(UUID().uuidString).out"
        defer { unlink(output) }
        let process = try Self.launch(
            "/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", program] + arguments,
            output: output)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(5_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            Issue.record("\(program) \(arguments) did not finish in \(timeout) s")
        }
        process.waitUntilExit()
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        return Result(status: process.terminationStatus, output: text)
    }

    /// Starts a daemon with `config` that is expected to refuse to start: its exit status and
    /// what it logged. One that starts anyway is recorded as an issue and stopped after 20 s.
    static func startRefused(config: String) throws -> (status: Int32, log: String) {
        let daemon = try DaemonFixture(config: config)
        let output = daemon.directory + "/refused.log"
        let process = try DaemonFixture.launch(
            DaemonFixture.daemonPath,
            ["--socket", daemon.socket, "--state-directory", daemon.state, "--config", daemon.configPath!],
            output: output)
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            Issue.record("the daemon started with \(config)")
            process.terminate()
        }
        process.waitUntilExit()
        return (process.terminationStatus, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }

    /// Starts `path` with standard output and error into `output`.
    static func launch(_ path: String, _ arguments: [String], output: String, environment: [String: String]? = nil)
        throws -> Process
    {
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try handle.close()
        return process
    }

    /// A raw connection from the test process itself (uid 0).
    func connect() throws -> RawConnection { try RawConnection(path: socket) }
}

/// A client socket the test drives byte by byte.
final class RawConnection {
    let fd: Int32
    private var decoder = FrameDecoder(maximumLength: FrameLimits.hardMaximumLength)

    /// Connects; `quiet` throws without recording a test issue when nothing answers.
    init(path: String, quiet: Bool = false) throws {
        fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let connected = UnixSocketAddress(path: path)?.connect(fd) ?? -1
        // A throw after every property is set runs deinit, which closes the socket.
        if quiet && connected != 0 { throw POSIXError(.ECONNREFUSED) }
        try #require(connected == 0, "connect failed: errno \(errno)")
    }

    deinit { close(fd) }

    /// Sends `bytes`; false when the daemon has closed the connection.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    func send(_ message: Message, id: UInt32) throws {
        #expect(send(try message.frame(requestID: id).encoded(maximumLength: FrameLimits.hardMaximumLength)))
    }

    private var pending: [(id: UInt32, message: Message)] = []

    /// What one read brought.
    private enum Chunk {
        case bytes(ArraySlice<UInt8>)
        case closed
        case timedOut
    }

    /// The next bytes from the daemon, waiting until `deadline`.
    private func nextChunk(until deadline: Date) -> Chunk {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while Date() < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) >= 0 else { return .closed }
            guard poller.revents != 0 else { continue }
            let count = recv(fd, &buffer, buffer.count, 0)
            return count > 0 ? .bytes(buffer[0..<count]) : .closed
        }
        return .timedOut
    }

    /// The next message, or nil when the connection ends first (or nothing comes in `timeout` s).
    func receive(timeout: Double = 10) -> (id: UInt32, message: Message)? {
        let deadline = Date().addingTimeInterval(timeout)
        while pending.isEmpty {
            guard readFrames(until: deadline) else { return nil }
        }
        return pending.removeFirst()
    }

    /// The nonce of the daemon's challenge on this connection, once it came.
    private var challengeNonce: [UInt8]?

    /// Reads one chunk and sorts its frames: the daemon's first frame, its challenge, is kept for
    /// hello (``nonce()``), every other one queued for ``receive(timeout:)``. False when the
    /// connection ended, nothing came by `deadline`, or a frame does not decode.
    private func readFrames(until deadline: Date) -> Bool {
        guard case .bytes(let bytes) = nextChunk(until: deadline), let frames = try? decoder.append(bytes)
        else { return false }
        for frame in frames {
            guard let message = try? Message(frame) else { return false }
            if case .challenge(let nonce) = message, challengeNonce == nil {
                challengeNonce = nonce
            } else {
                pending.append((frame.requestID, message))
            }
        }
        return true
    }

    /// This connection's challenge nonce, read from the daemon (up to 10 s) when it has not come yet.
    func nonce() throws -> [UInt8] {
        let deadline = Date().addingTimeInterval(10)
        while challengeNonce == nil && pending.isEmpty {
            guard readFrames(until: deadline) else { break }
        }
        return try #require(challengeNonce, "the daemon sent no challenge")
    }

    /// This connection's hello, echoing its challenge.
    func hello(group: String = "raw.group", client: String = "test") throws -> Message {
        .hello(
            minimumVersion: FrameLimits.version, maximumVersion: FrameLimits.version, accessGroups: [group],
            client: client, challenge: try nonce())
    }

    /// True when the daemon closes the connection within `timeout` s (reading and dropping
    /// whatever comes before the end).
    func closedByPeer(within timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            switch nextChunk(until: deadline) {
            case .bytes: continue
            case .closed: return true
            case .timedOut: return false
            }
        }
    }

    /// Sends hello and expects the reply.
    func greet(group: String = "raw.group") throws {
        try send(try hello(group: group), id: 1)
        let reply = try #require(receive())
        guard case .helloReply(let version, _) = reply.message else {
            Issue.record("expected helloReply, got \(reply.message)")
            return
        }
        #expect(version == FrameLimits.version)
    }
}
