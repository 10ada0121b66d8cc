import Glibc
import Synchronization

/// Answers prompts with lines read from a file descriptor, like gpg's `--passphrase-fd`.
///
/// Each prompt consumes one line (without its newline; a trailing carriage return is also
/// dropped), read a byte at a time so nothing past it is consumed. End of file before any
/// byte means the passphrase is missing: the prompt is cancelled. Lines longer than
/// 512 bytes (PAM's maximum response) are cut. Module messages go to standard error.
public final class FileDescriptorPassphraseSource: PassphraseSource {
    private let descriptor: Int32
    private let lock = Mutex(())
    private let showMessage: @Sendable (PAMMessage) -> Void

    /// PAM's maximum response size.
    static let maximumLength = 512

    /// A source reading `descriptor`; `showMessage` displays module messages (default: standard error).
    public init(descriptor: Int32, showMessage: @escaping @Sendable (PAMMessage) -> Void = StandardError.write) {
        self.descriptor = descriptor
        self.showMessage = showMessage
    }

    /// The next line, or nil at end of file or on a read error.
    public func passphrase(for prompt: PassphrasePrompt) -> Passphrase? {
        lock.withLock { _ in
            var line = [UInt8](repeating: 0, count: Self.maximumLength)
            defer { explicit_bzero(&line, line.count) }
            var length = 0
            var sawByte = false
            var byte: UInt8 = 0
            while true {
                let got = read(descriptor, &byte, 1)
                if got < 0 && errno == EINTR { continue }
                guard got == 1 else { break }
                sawByte = true
                if byte == UInt8(ascii: "\n") { break }
                if length < line.count {
                    line[length] = byte
                    length += 1
                }
            }
            byte = 0
            guard sawByte else { return nil }
            if length > 0 && line[length - 1] == UInt8(ascii: "\r") { length -= 1 }
            return Passphrase(bytes: line[0..<length])
        }
    }

    /// Passes the message to the display function.
    public func show(_ message: PAMMessage) { showMessage(message) }
}

/// Writes module messages to standard error.
public enum StandardError {
    /// Writes `keygate: <message>` and a newline to standard error.
    @Sendable public static func write(_ message: PAMMessage) {
        let line = Array("keygate: \(message)\n".utf8)
        _ = line.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }
}
