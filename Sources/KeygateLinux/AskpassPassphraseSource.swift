public import Foundation
public import KeygatePAM

/// Answers PAM prompts through an askpass program, as `ssh` and `sudo -A` do, for GUI apps
/// and helpers that have no terminal: the program is run with one argument (the reason and
/// the module's prompt, on two lines), shows a dialog, and prints the answer on standard
/// output. A non-zero exit (the dialog was dismissed) is a cancel.
///
/// The program is `KEYGATE_ASKPASS`, else `SSH_ASKPASS` when a display is there (`DISPLAY` or
/// `WAYLAND_DISPLAY`). The answer is read into wiped memory; its final newline is dropped.
public final class AskpassPassphraseSource: PassphraseSource {
    /// The program run for each prompt.
    public let program: String
    private let showMessage: @Sendable (PAMMessage) -> Void

    /// The askpass program the environment names, or nil when it names none.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> AskpassPassphraseSource? {
        if let program = environment["KEYGATE_ASKPASS"], !program.isEmpty {
            return AskpassPassphraseSource(program: program)
        }
        let display = !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
        if display, let program = environment["SSH_ASKPASS"], !program.isEmpty {
            return AskpassPassphraseSource(program: program)
        }
        return nil
    }

    /// A source running `program`; module messages go to `showMessage` (standard error by default).
    public init(program: String, showMessage: @escaping @Sendable (PAMMessage) -> Void = StandardError.write) {
        self.program = program
        self.showMessage = showMessage
    }

    /// The answer the program printed, or nil when it failed or was dismissed.
    public func passphrase(for prompt: PassphrasePrompt) -> Passphrase? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = [prompt.reason.isEmpty ? prompt.text : prompt.reason + "\n" + prompt.text]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        var answer = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 1024)
        defer {
            answer.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } }
            chunk.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } }
        }
        let descriptor = output.fileHandleForReading.fileDescriptor
        while answer.count <= Self.maximumAnswer {
            let got = read(descriptor, &chunk, chunk.count)
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            answer += chunk[0..<got]
        }
        process.waitUntilExit()
        guard process.terminationStatus == 0, answer.count <= Self.maximumAnswer else { return nil }
        var length = answer.count
        if length > 0, answer[length - 1] == UInt8(ascii: "\n") { length -= 1 }
        return Passphrase(bytes: answer[0..<length])
    }

    /// The longest answer read; a longer one is refused as a cancel.
    static let maximumAnswer = 4096

    /// Shows a module's message (standard error by default; askpass programs have no way to show one).
    public func show(_ message: PAMMessage) { showMessage(message) }
}
