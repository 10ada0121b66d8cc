import Glibc

/// The controlling terminal's settings when a daemon session opened, put back when it ends.
///
/// A relayed prompt is read on a thread of its own (KeygateClient keeps watching the socket);
/// when the daemon stops waiting for the answer (its `prompt-timeout`), the command ends while
/// that thread may still hold the terminal in raw mode without echo. Putting the settings back
/// before the process exits leaves the user's terminal as it was. Without a terminal, nothing.
final class TerminalGuard: Sendable {
    private let descriptor: Int32
    private let settings: termios

    /// Saves the settings of `/dev/tty`, or nil when the process has no controlling terminal.
    static func save() -> TerminalGuard? {
        let descriptor = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        var settings = termios()
        guard tcgetattr(descriptor, &settings) == 0 else {
            close(descriptor)
            return nil
        }
        return TerminalGuard(descriptor: descriptor, settings: settings)
    }

    private init(descriptor: Int32, settings: termios) {
        self.descriptor = descriptor
        self.settings = settings
    }

    deinit { close(descriptor) }

    /// Puts the saved settings back.
    func restore() {
        var settings = settings
        _ = tcsetattr(descriptor, TCSANOW, &settings)
    }
}
