import Glibc

/// The address of a Unix stream socket named by a path: what `keygated` binds and listens on,
/// and what a client connects to. One definition for the daemon, the client and the tests.
public struct UnixSocketAddress: Sendable, Equatable {
    /// The socket's path.
    public let path: String

    /// The longest path a `sockaddr_un` holds, in bytes (its `sun_path` less the final NUL).
    public static let maximumPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// The address of `path`, or nil when no socket can have it: empty, longer than
    /// ``maximumPathLength`` bytes, or holding a NUL.
    public init?(path: String) {
        guard !path.isEmpty, path.utf8.count <= Self.maximumPathLength, !path.utf8.contains(0) else { return nil }
        self.path = path
    }

    /// Calls `body` with the address as the kernel takes it (and its length).
    private func withSockaddr<R, E: Error>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws(E) -> R) throws(E) -> R {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        return try withUnsafePointer(to: &address) { pointer throws(E) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(E) in
                try body(address, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }

    /// `connect(2)` of `socket` to this address: 0, or -1 with `errno`.
    public func connect(_ socket: Int32) -> Int32 { withSockaddr { Glibc.connect(socket, $0, $1) } }

    /// `bind(2)` of `socket` to this address: 0, or -1 with `errno`.
    public func bind(_ socket: Int32) -> Int32 { withSockaddr { Glibc.bind(socket, $0, $1) } }
}
