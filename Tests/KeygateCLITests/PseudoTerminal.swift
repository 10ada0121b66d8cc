import Foundation
import Synchronization

/// Runs a shell command line on a pseudo-terminal through util-linux's `script`, so the command
/// has a controlling terminal (`/dev/tty`) and its standard input and output are that terminal,
/// as when a person types. What the test writes is what the person types; what the terminal
/// shows (prompts, output, never a hidden answer) is read back.
final class PseudoTerminal {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let screen = Screen()
    private let reader: Thread

    /// Starts `commandLine` (run by `sh -c` inside `script -qec`) with `environment` added,
    /// less the PAM and NSS wrappers: no terminal test proves presence, and every preloaded
    /// process (script, sh, stty, keygate) would otherwise create a pam_wrapper directory that
    /// parallel tests' processes can collide with.
    init(_ commandLine: String, environment: [String: String]) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", commandLine, "/dev/null"]
        var env = ProcessInfo.processInfo.environment
        for key in ["XDG_SESSION_ID", "KEYGATE_DEVICE_STATE", "KEYGATE_ENROLLMENT_FILE", "KEYGATE_REUSE_SECONDS"] {
            env[key] = nil
        }
        env["SHELL"] = "/bin/sh"
        for (key, value) in environment
        where key != "LD_PRELOAD" && !key.hasPrefix("PAM_WRAPPER")
            && !key.hasPrefix("NSS_WRAPPER")
        {
            env[key] = value
        }
        process.environment = env
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        let handle = output.fileHandleForReading
        let screen = screen
        reader = Thread {
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                screen.data.withLock { $0.append(data) }
            }
        }
        try process.run()
        reader.start()
    }

    /// Everything the terminal showed so far.
    var shown: Data { screen.data.withLock { $0 } }
    var shownText: String { String(decoding: shown, as: UTF8.self) }

    /// Waits until the terminal has shown `text` `count` times in all (or 10 seconds pass).
    @discardableResult
    func waitFor(_ text: String, count: Int = 1) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if shownText.components(separatedBy: text).count - 1 >= count { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return false
    }

    /// Types `bytes` on the terminal.
    func type(_ bytes: String) {
        input.fileHandleForWriting.write(Data(bytes.utf8))
    }

    /// Waits for the command to end (10 seconds at most, then it is stopped) and returns what
    /// the terminal showed.
    func finish() -> String {
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        try? input.fileHandleForWriting.close()
        while !reader.isFinished { Thread.sleep(forTimeInterval: 0.001) }
        return shownText
    }

    private final class Screen: Sendable {
        let data = Mutex(Data())
    }

    /// `words` quoted for `sh`.
    static func quoted(_ words: [String]) -> String {
        words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
    }
}
