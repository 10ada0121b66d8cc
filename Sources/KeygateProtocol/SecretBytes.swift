/// Secret bytes carried in a frame (an item's value, a prompt's answer), in memory that is
/// overwritten with zeros when released.
///
/// KeygateProtocol stays below KeygateStore (no C, no libsodium), so it cannot use
/// `SecretData`; the daemon and clients convert at the edge (`SecretData(bytes:)` from
/// ``withUnsafeBytes(_:)``, and back through `SecretData.withUnsafeBytes`). The zeroing here is
/// a plain Swift store, which an optimiser could in principle drop; the store's `SecretData`
/// (`sodium_memzero`) is the guarantee once the bytes cross into it.
public final class SecretBytes: @unchecked Sendable, Equatable, CustomStringConvertible {
    // Immutable after init; zeroed and freed once, in deinit.
    private let storage: UnsafeMutableRawBufferPointer
    /// The number of bytes.
    public let count: Int

    /// Copies `bytes`.
    public init(bytes: some Collection<UInt8>) {
        count = bytes.count
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        _ = storage.initializeMemory(as: UInt8.self, from: bytes)
    }

    /// Copies `buffer`.
    public convenience init(copying buffer: UnsafeRawBufferPointer) {
        self.init(bytes: buffer)
    }

    /// Lends the bytes for the duration of `body`; do not let them escape.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage[0..<count]))
    }

    /// Compares every byte (the time taken depends on the length only).
    public static func == (lhs: SecretBytes, rhs: SecretBytes) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.withUnsafeBytes { a in
            rhs.withUnsafeBytes { b in
                var difference: UInt8 = 0
                for index in 0..<a.count { difference |= a[index] ^ b[index] }
                return difference == 0
            }
        }
    }

    /// `<SecretBytes: N bytes>`; never the bytes.
    public var description: String { "<SecretBytes: \(count) bytes>" }

    /// Overwrites an array's bytes with zeros (for buffers that held a frame).
    public static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
    }

    deinit {
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        storage.deallocate()
    }
}
