// Starting other programs and this one again (worker modes), with wall time and peak RSS.

import Foundation
import Glibc

/// How a child process ended.
struct Finished {
    /// The exit status, or 128 + the signal.
    var status: Int32
    /// Wall-clock seconds from spawn to exit.
    var seconds: Double
    /// The child's peak resident set size, in KiB.
    var maxRSSKiB: Int
    /// What it wrote to standard output.
    var output: String
}

/// This executable, for the worker modes.
let selfPath: String = {
    var buffer = [CChar](repeating: 0, count: 4096)
    let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    return length > 0
        ? String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "keygate-bench"
}()

/// A started child.
struct Child {
    let pid: pid_t
    let started: Double
    let outputPath: String
    /// Whether the child leads a process group of its own (``start(_:environment:stderrPath:ownGroup:)``).
    var ownGroup = false

    /// Waits for the child and collects its figures. With `timeout`, a child still running
    /// after that many seconds is killed (status 124, as timeout(1) reports it). A child in a
    /// process group of its own is killed with its whole group, at the time-out and when it
    /// has ended: whatever it started and left behind (a session bus, a daemon the bus
    /// activated) goes with it.
    ///
    /// The peak RSS is the child's own `VmHWM`, sampled from /proc every 2 ms while it runs
    /// (rusage's `ru_maxrss` would report this large process's: posix_spawn's child shares
    /// our memory until exec, and Linux keeps that high-water mark across the exec). Pass
    /// `sampleMemory: false` to time a short run with a blocking wait instead.
    func wait(timeout: Double? = nil, sampleMemory: Bool = true) -> Finished {
        var status: Int32 = 0
        var peakKiB = 0
        var killed = false
        if sampleMemory || timeout != nil {
            while true {
                if sampleMemory { peakKiB = max(peakKiB, highWaterMark(of: pid)) }
                let waited = waitpid(pid, &status, WNOHANG)
                if waited == pid || (waited < 0 && errno != EINTR) { break }
                if let timeout, !killed, now() - started > timeout {
                    kill(ownGroup ? -pid : pid, SIGKILL)
                    killed = true
                }
                usleep(2_000)
            }
        } else {
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        let seconds = now() - started
        // The group outlives its leader while a member is left; its id is not reused until then.
        if ownGroup { kill(-pid, SIGKILL) }
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        unlink(outputPath)
        let code = killed ? 124 : status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Finished(status: code, seconds: seconds, maxRSSKiB: peakKiB, output: output)
    }
}

/// `VmHWM` of a running process, in KiB (0 when it cannot be read).
func highWaterMark(of pid: pid_t) -> Int {
    // /proc files report size 0, so they are read with read(2) until it returns 0.
    let descriptor = open("/proc/\(pid)/status", O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return 0 }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count <= 0 { break }
        bytes += chunk[0..<count]
    }
    let status = String(decoding: bytes, as: UTF8.self)
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.dropFirst(6).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") ?? 0
    }
    return 0
}

/// Starts `arguments` (the first is looked up in PATH when it has no slash) with
/// `environment` (nil: this process's), standard input from /dev/null, standard output to a
/// temporary file and standard error to `stderrPath`; with `ownGroup`, as the leader of a new
/// process group, which ``Child/wait(timeout:sampleMemory:)`` kills as a whole.
func start(
    _ arguments: [String], environment: [String: String]? = nil, stderrPath: String = "/dev/null",
    ownGroup: Bool = false
) -> Child? {
    let outputPath = "/tmp/keygate-bench-out-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
    let argv = arguments.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    let environmentList =
        (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in environmentList { free(pointer) } }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    if ownGroup {
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
    }
    var pid: pid_t = 0
    let started = now()
    let result = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, environmentList)
    guard result == 0 else { return nil }
    return Child(pid: pid, started: started, outputPath: outputPath, ownGroup: ownGroup)
}

/// Runs `arguments` to the end (see ``start(_:environment:stderrPath:ownGroup:)`` and
/// ``Child/wait(timeout:sampleMemory:)``); nil when it cannot start.
func run(
    _ arguments: [String], environment: [String: String]? = nil, stderrPath: String = "/dev/null",
    timeout: Double? = nil, sampleMemory: Bool = false, ownGroup: Bool = false
) -> Finished? {
    start(arguments, environment: environment, stderrPath: stderrPath, ownGroup: ownGroup)?.wait(
        timeout: timeout, sampleMemory: sampleMemory)
}

/// The median wall time of `runs` runs of `arguments` after one untimed run (which pages the
/// program in), or nil when a run fails.
func medianRun(_ arguments: [String], runs: Int, environment: [String: String]? = nil) -> Double? {
    interleavedMedianRuns([(arguments, environment)], runs: runs)[0]
}

/// The median wall time of each command, run in `runs` interleaved rounds (one run of each
/// command per round, in order) after one untimed round (which pages the programs in), so a
/// machine that slows down for a while slows every command alike; nil for a command whose run
/// failed (it is not run again).
func interleavedMedianRuns(_ commands: [(arguments: [String], environment: [String: String]?)], runs: Int)
    -> [Double?]
{
    var times = [[Double]?](repeating: [], count: commands.count)
    for round in 0...runs {
        for (index, command) in commands.enumerated() where times[index] != nil {
            guard let finished = run(command.arguments, environment: command.environment), finished.status == 0 else {
                times[index] = nil
                continue
            }
            if round > 0 { times[index]?.append(finished.seconds) }
        }
    }
    return times.map { $0.map(median) }
}

/// Whether `program` is on the PATH.
func installed(_ program: String) -> Bool {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    return path.split(separator: ":").contains { access("\($0)/\(program)", X_OK) == 0 }
}

/// A new private temporary directory in `parent`.
func temporaryDirectory(_ name: String, in parent: String = "/tmp") -> String {
    var template = Array("\(parent)/keygate-bench-\(name)-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { fatalError("cannot create a temporary directory") }
    return String(cString: made)
}

/// Removes a directory tree.
func removeTree(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
}
