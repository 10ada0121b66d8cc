import Foundation
import Glibc
import Testing

/// A crashed daemon writes no core file (issue 27 point 2): it holds every user's store keys,
/// so it forbids dumps itself at start (RLIMIT_CORE 0, hard limit included, and
/// PR_SET_DUMPABLE 0), whatever limit it inherited; keys are also kept in pages marked
/// MADV_DONTDUMP.
@Suite struct CoreDumpTests {
    /// Runs its command with no core-size limit, in `directory` (where core_pattern "core" writes).
    static func unlimitedCores(in directory: String) -> [String] {
        ["/bin/sh", "-c", "ulimit -c unlimited && cd '\(directory)' && exec \"$0\" \"$@\""]
    }

    static func cores(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix("core") }
    }

    /// Waits up to 10 s for `process` to end; the signal that ended it (0: none).
    static func endingSignal(_ process: Process) -> Int32 {
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        guard !process.isRunning else { return 0 }
        return process.terminationReason == .uncaughtSignal ? process.terminationStatus : 0
    }

    @Test func aDaemonKilledBySIGSEGVWritesNoCore() throws {
        let daemon = try DaemonFixture()
        let cwd = daemon.directory + "/cwd"
        try FileManager.default.createDirectory(atPath: cwd, withIntermediateDirectories: false)
        chmod(cwd, 0o777)

        // The control: under the same wrapper an ordinary process does dump core here, so the
        // absence below is the daemon's doing, not this machine's core_pattern.
        let control = try DaemonFixture.launch(
            "/bin/sh", Array(Self.unlimitedCores(in: cwd).dropFirst()) + ["/bin/sleep", "30"],
            output: daemon.directory + "/control.log")
        usleep(200_000)
        kill(control.processIdentifier, SIGSEGV)
        #expect(Self.endingSignal(control) == SIGSEGV)
        let pattern = (try? String(contentsOfFile: "/proc/sys/kernel/core_pattern", encoding: .utf8)) ?? "?"
        try #require(
            !Self.cores(in: cwd).isEmpty,
            "this machine writes no core file for a crashed process (core_pattern \(pattern)), so the test cannot show the daemon writes none"
        )
        for core in Self.cores(in: cwd) { unlink(cwd + "/" + core) }

        try daemon.start(wrapper: Self.unlimitedCores(in: cwd))
        // A user's store and key in memory.
        #expect(try daemon.probe(as: DaemonFixture.userA, "add", "svc", "acc", "value").lines == ["ok"])
        let pid = try #require(daemon.process?.processIdentifier)
        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let coreLine = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }
        #expect(
            coreLine?.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2) == ["0", "0"],
            "\(coreLine ?? "no limit line")")
        kill(pid, SIGSEGV)
        #expect(Self.endingSignal(try #require(daemon.process)) == SIGSEGV)
        usleep(200_000)
        #expect(Self.cores(in: cwd).isEmpty, "the daemon dumped core: \(Self.cores(in: cwd))")
        #expect(Self.cores(in: daemon.state).isEmpty)
        // Nor does it print memory (the runtime's crash report shows the bytes around each
        // register): a crash is the kernel's, at once.
        #expect(!daemon.log.contains("Registers:") && !daemon.log.contains("Backtracing"), "\(daemon.log)")
    }
}
