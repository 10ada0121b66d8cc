import Glibc
import Synchronization

/// Asks on the controlling terminal (`/dev/tty`) with echo off, like `sudo` and `ssh`.
///
/// The terminal is put in a non-canonical mode without echo and without signal keys, so
/// Ctrl-C and Ctrl-D arrive as bytes: Ctrl-C, or end of file on an empty line, cancels.
/// Backspace and Ctrl-U edit. The saved terminal settings are restored on every path,
/// including SIGTERM, SIGHUP, SIGINT and SIGQUIT sent from outside while a prompt is open
/// (the handler restores the terminal, then lets the signal take its default action).
public final class TerminalPassphraseSource: PassphraseSource {
    private let descriptor: Int32
    /// One prompt at a time in the whole process: the signal handlers that restore a terminal
    /// are process-wide, so two prompts must never arm them at once (and one person answers
    /// one prompt at a time anyway).
    private static let lock = Mutex(())
    /// The name each reason line starts with (`keygate: Read the payment token`).
    public let label: String

    /// Opens the controlling terminal, or returns nil when the process has none (a service,
    /// CI): then no prompt can be shown and callers must not wait for one.
    /// - Parameters:
    ///   - path: the terminal device (default `/dev/tty`, the controlling terminal).
    ///   - label: the program name shown before each reason (default `keygate`).
    public static func open(path: String = "/dev/tty", label: String = "keygate") -> TerminalPassphraseSource? {
        let descriptor = Glibc.open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        guard isatty(descriptor) == 1 else {
            close(descriptor)
            return nil
        }
        return TerminalPassphraseSource(descriptor: descriptor, label: label)
    }

    private init(descriptor: Int32, label: String) {
        self.descriptor = descriptor
        self.label = label
    }

    deinit { close(descriptor) }

    /// Shows the reason and the module's prompt, then reads one answer (at most
    /// ``FileDescriptorPassphraseSource``'s 512 bytes; more is cut off).
    public func passphrase(for prompt: PassphrasePrompt) -> Passphrase? {
        let preamble = prompt.reason.isEmpty ? "" : "\(label): \(prompt.reason)\n"
        return readLine(
            preamble: preamble, prompt: prompt.text, echo: prompt.echo,
            limit: FileDescriptorPassphraseSource.maximumLength
        )?.line
    }

    /// What ``readHiddenLine(prompt:maximumLength:)`` read.
    public enum HiddenLine: Sendable {
        /// The line typed, without its newline, in wiped-on-release memory.
        case line(Passphrase)
        /// Ctrl-C, Ctrl-D on an empty line, end of file, or a terminal that could not be set up.
        case cancelled
        /// More than the maximum was typed; what was typed is wiped and not returned.
        case tooLong
    }

    /// Shows `prompt` and reads one line with echo off, as a passphrase is read (same keys,
    /// same cancel, the terminal restored on every path). For secrets other than PAM answers,
    /// such as an item's value typed by hand. The prompt is shown only once echo is off, so
    /// nothing typed after it appears is echoed or discarded.
    public func readHiddenLine(prompt: String, maximumLength: Int) -> HiddenLine {
        guard let answer = readLine(preamble: "", prompt: prompt, echo: false, limit: maximumLength) else {
            return .cancelled
        }
        return answer.overflowed ? .tooLong : .line(answer.line)
    }

    /// Prints the message on the terminal.
    public func show(_ message: PAMMessage) {
        Self.lock.withLock { _ in writeText("\(message)\n") }
    }

    /// Writes `preamble`, puts the terminal in raw mode (echo off unless `echo`), writes
    /// `prompt` and reads one line of at most `limit` bytes; nil when cancelled.
    private func readLine(
        preamble: String, prompt: String, echo: Bool, limit: Int
    ) -> (line: Passphrase, overflowed: Bool)? {
        Self.lock.withLock { _ in
            if !preamble.isEmpty { writeText(preamble) }
            var saved = termios()
            guard tcgetattr(descriptor, &saved) == 0 else { return nil }
            var raw = saved
            let off = tcflag_t(ICANON) | tcflag_t(ISIG) | (echo ? 0 : tcflag_t(ECHO))
            raw.c_lflag &= ~off
            withUnsafeMutableBytes(of: &raw.c_cc) { cc in
                cc[Int(VMIN)] = 1
                cc[Int(VTIME)] = 0
            }
            TerminalRestorer.arm(descriptor: descriptor, settings: saved)
            defer {
                _ = tcsetattr(descriptor, TCSAFLUSH, &saved)
                TerminalRestorer.disarm()
                writeText("\n")
            }
            guard tcsetattr(descriptor, TCSAFLUSH, &raw) == 0 else { return nil }
            writeText(prompt)
            return readAnswer(limit: limit)
        }
    }

    private func readAnswer(limit: Int) -> (line: Passphrase, overflowed: Bool)? {
        var line = [UInt8](repeating: 0, count: max(limit, 1))
        defer { explicit_bzero(&line, line.count) }
        var length = 0
        var overflowed = false
        var byte: UInt8 = 0
        defer { byte = 0 }
        while true {
            let got = read(descriptor, &byte, 1)
            if got < 0 && errno == EINTR { continue }
            guard got == 1 else { return nil }  // end of file or error: cancel
            switch byte {
            case 0x0a, 0x0d:
                return (Passphrase(bytes: line[0..<min(length, limit)]), overflowed)
            case 0x03:  // Ctrl-C
                return nil
            case 0x04:  // Ctrl-D
                if length == 0 { return nil }
            case 0x7f, 0x08:  // backspace
                if length > 0 { length -= 1 }
            case 0x15:  // Ctrl-U
                length = 0
                overflowed = false
            default:
                if length < limit {
                    line[length] = byte
                    length += 1
                } else {
                    overflowed = true
                }
            }
        }
    }

    private func writeText(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }
}

/// Restores the terminal when a signal arrives while a prompt has it in raw mode.
private enum TerminalRestorer {
    // Written before the handlers are installed and read only by them; plain values, so the
    // handler touches no lazily initialised or reference-counted state.
    nonisolated(unsafe) static var descriptor: Int32 = -1
    nonisolated(unsafe) static var settings = termios()
    nonisolated(unsafe) static var previous: [Int32: sigaction] = [:]
    static let signals: [Int32] = [SIGTERM, SIGHUP, SIGINT, SIGQUIT]

    static func arm(descriptor: Int32, settings: termios) {
        Self.descriptor = descriptor
        Self.settings = settings
        for signal in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { received in
                if TerminalRestorer.descriptor >= 0 {
                    _ = tcsetattr(TerminalRestorer.descriptor, TCSANOW, &TerminalRestorer.settings)
                }
                Glibc.signal(received, SIG_DFL)
                raise(received)
            }
            sigemptyset(&action.sa_mask)
            var old = sigaction()
            sigaction(signal, &action, &old)
            previous[signal] = old
        }
    }

    static func disarm() {
        for signal in signals {
            if var old = previous[signal] { sigaction(signal, &old, nil) }
        }
        previous = [:]
        descriptor = -1
    }
}
