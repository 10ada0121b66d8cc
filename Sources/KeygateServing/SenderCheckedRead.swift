import CPeer
import Glibc

/// Reads of a Unix stream socket on which the kernel names the process that wrote each chunk
/// (`SO_PASSCRED`, `SCM_CREDENTIALS`): a frontend takes bytes only from the process that
/// connected, never from one it handed the descriptor on to (a child, a process it was passed
/// to), whatever that process claims.
public enum SenderCheckedRead {
    /// What one ``receive(_:into:)`` read.
    public enum Outcome: Sendable, Equatable {
        /// `count` bytes, all written by the process `sender` (0: the kernel named none).
        case bytes(count: Int, sender: Int32)
        /// The peer closed its end.
        case end
        /// The read failed with `errno`.
        case failed(errno: Int32)
    }

    /// Asks the kernel to name the sender of every chunk read from `socket` from now on (a
    /// listening socket's connections inherit it): true when set.
    public static func passCredentials(_ socket: Int32) -> Bool {
        keygate_pass_credentials(socket) == 0
    }

    /// One read into `buffer`, retried on `EINTR`; descriptors passed with the bytes are closed,
    /// never taken.
    public static func receive(_ socket: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Outcome {
        while true {
            var sender: Int32 = 0
            var descriptor: Int32 = -1
            let count = keygate_recv_with_sender(
                socket, buffer.baseAddress, UInt(buffer.count), 0, &sender, &descriptor)
            if descriptor >= 0 { close(descriptor) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { return .failed(errno: errno) }
            if count == 0 { return .end }
            return .bytes(count: count, sender: sender)
        }
    }
}
