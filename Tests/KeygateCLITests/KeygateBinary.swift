import Foundation
import Synchronization
import Testing

/// Runs the built `keygate` executable as a subprocess, as a user would.
struct KeygateBinary {
    struct Result {
        let status: Int32
        let stdout: Data
        let stderr: String
        var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
        /// The last non-empty line of standard error.
        var lastErrorLine: String { stderr.split(separator: "\n").last.map(String.init) ?? "" }
    }

    /// A data directory for runs that name none, private to this test process.
    static let isolatedData = FileManager.default.temporaryDirectory.appendingPathComponent(
        "keygate-cli-tests-\(ProcessInfo.processInfo.processIdentifier)"
    ).path

    /// The executable next to the test bundle (`.build/<config>/keygate`).
    static let url: URL = {
        var directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        // swift-testing may run from inside the .xctest bundle directory
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("keygate").path),
            directory.path != "/"
        {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent("keygate")
    }()

    /// Runs the binary; `descriptor3`, when given, is readable on the child's descriptor 3, and
    /// `shellPrefix` (shell commands such as `ulimit -f N;`) runs before it in the same shell.
    static func run(
        _ arguments: [String], stdin: Data = Data(), environment: [String: String] = [:], descriptor3: Data? = nil,
        shellPrefix: String = ""
    ) throws -> Result {
        if let descriptor3 {
            // Process cannot pass extra descriptors: go through a shell that opens a file on 3.
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("keygate-fd3-\(UUID().uuidString)")
            try descriptor3.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let quoted = ([url.path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            return try run(
                ["-c", shellPrefix + " exec " + quoted.joined(separator: " ") + " 3<'\(file.path)'"], stdin: stdin,
                environment: environment,
                executable: URL(fileURLWithPath: "/bin/sh"))
        }
        return try run(arguments, stdin: stdin, environment: environment, executable: url)
    }

    static func run(
        _ arguments: [String], stdin: Data, environment: [String: String], executable: URL
    ) throws -> Result {
        // pam_wrapper picks its directory `/tmp/pam.<letter>` from the pid and then creates it,
        // so two processes starting at once can pick the same letter: the loser exits 1 from
        // the library's constructor, before any of keygate (or git) runs. Only that start-up
        // failure, which changed nothing, is tried again.
        var attempt = 0
        while true {
            let result = try runOnce(arguments, stdin: stdin, environment: environment, executable: executable)
            attempt += 1
            guard attempt < 5, result.status == 1 || result.status == 128,
                result.stderr.contains("pwrap_init: Failed to create pam_wrapper config dir")
            else { return result }
        }
    }

    private static func runOnce(
        _ arguments: [String], stdin: Data, environment: [String: String], executable: URL
    ) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for key in ["XDG_SESSION_ID", "KEYGATE_DEVICE_STATE", "KEYGATE_ENROLLMENT_FILE", "KEYGATE_REUSE_SECONDS"] {
            env[key] = nil
        }
        // Never the real user's store, trail, failure counter or proof records.
        env["XDG_DATA_HOME"] = isolatedData
        env["XDG_RUNTIME_DIR"] = nil
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let input = Pipe()
        let output = Pipe()
        let error = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        input.fileHandleForWriting.write(stdin)
        try input.fileHandleForWriting.close()
        // Read both pipes to the end before waiting, so a full pipe cannot block the child.
        let errorData = Mutex(Data())
        let reader = Thread { errorData.withLock { $0 = error.fileHandleForReading.readDataToEndOfFile() } }
        reader.start()
        let outData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while reader.isExecuting || !reader.isFinished { Thread.sleep(forTimeInterval: 0.001) }
        return Result(
            status: process.terminationStatus, stdout: outData,
            stderr: String(decoding: errorData.withLock { $0 }, as: UTF8.self))
    }
}
