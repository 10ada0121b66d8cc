import Foundation

/// The helper programs KeygateLinux asks (`fprintd-list`): found on `PATH`, run
/// with no input, their standard error discarded, stopped after 5 seconds.
enum Subprocess {
    /// The path of `tool` on `PATH`, or nil.
    static func which(_ tool: String, environment: [String: String]) -> String? {
        let path = environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs `tool`; its standard output, or nil when it fails or times out.
    static func run(_ tool: String, _ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            process.terminate()
            return nil
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// The name of this process's effective user.
    static func currentUserName() -> String? {
        guard let entry = getpwuid(geteuid()) else { return nil }
        return String(cString: entry.pointee.pw_name)
    }
}
