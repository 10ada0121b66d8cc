internal import CSodium
import Glibc

/// Secret bytes (an item's value, a key) in memory Keygate owns and wipes.
///
/// The bytes live in a `malloc`ed buffer overwritten with `sodium_memzero` on release, are
/// read only inside ``withUnsafeBytes(_:)``, compare in constant time, and never appear in a
/// `description`, an error or a log line.
public final class SecretData: @unchecked Sendable, Equatable, CustomStringConvertible {
    // Immutable after init; wiped and freed once, in deinit.
    private let storage: UnsafeMutableRawBufferPointer
    /// The number of bytes.
    public let count: Int

    /// Copies `bytes`. Wipe your own copy afterwards if you can.
    public init(bytes: some Collection<UInt8>) {
        count = bytes.count
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        _ = storage.initializeMemory(as: UInt8.self, from: bytes)
    }

    /// Copies the UTF-8 bytes of `text`.
    public convenience init(_ text: String) { self.init(bytes: Array(text.utf8)) }

    /// `count` bytes filled by `body`, which receives the whole buffer to write.
    init(count: Int, filling body: (UnsafeMutableRawBufferPointer) -> Void) {
        self.count = count
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        body(UnsafeMutableRawBufferPointer(rebasing: storage[0..<count]))
    }

    /// `count` random bytes from libsodium.
    public static func random(count: Int) -> SecretData {
        Sodium.initialize()
        return SecretData(count: count) { buffer in
            if let base = buffer.baseAddress { randombytes_buf(base, buffer.count) }
        }
    }

    /// Lends the bytes for the duration of `body`; do not let them escape.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage[0..<count]))
    }

    /// A copy of the bytes as an array, for writing them out (stdout, a file). The caller owns
    /// the copy and should wipe it (`SecretData.wipe`) when done.
    public func copyBytes() -> [UInt8] { withUnsafeBytes { Array($0) } }

    /// Overwrites an array's bytes with zeros.
    public static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { sodium_memzero(base, $0.count) } }
    }

    /// Constant-time comparison.
    public static func == (lhs: SecretData, rhs: SecretData) -> Bool {
        guard lhs.count == rhs.count else { return false }
        guard lhs.count > 0 else { return true }
        return lhs.withUnsafeBytes { a in
            rhs.withUnsafeBytes { b in sodium_memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
        }
    }

    /// `<SecretData: N bytes>`; never the bytes.
    public var description: String { "<SecretData: \(count) bytes>" }

    deinit {
        if let base = storage.baseAddress { sodium_memzero(base, storage.count) }
        storage.deallocate()
    }
}
