internal import CSodium
import Glibc

/// Secret bytes (an item's value, a key) in memory Keygate owns and wipes.
///
/// The bytes live in a `malloc`ed buffer overwritten with `sodium_memzero` on release, are
/// read only inside ``withUnsafeBytes(_:)``, compare in constant time, and never appear in a
/// `description`, an error or a log line. A key (``random(count:)``, a key read from its file,
/// a key derived from a passphrase) lives in `sodium_malloc`ed pages instead, locked in memory
/// where the limit allows and marked `MADV_DONTDUMP`, so no core dump carries it.
public final class SecretData: @unchecked Sendable, Equatable, CustomStringConvertible {
    // Immutable after init; wiped and freed once, in deinit.
    private let storage: UnsafeMutableRawBufferPointer
    /// The number of bytes.
    public let count: Int
    /// True for a key's storage (`sodium_malloc`: guard pages, excluded from core dumps).
    private let isKey: Bool

    /// Copies `bytes`. Wipe your own copy afterwards if you can.
    public init(bytes: some Collection<UInt8>) {
        count = bytes.count
        isKey = false
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        _ = storage.initializeMemory(as: UInt8.self, from: bytes)
    }

    /// Copies the UTF-8 bytes of `text`.
    public convenience init(_ text: String) { self.init(bytes: Array(text.utf8)) }

    /// `count` bytes filled by `body`, which receives the whole buffer to write.
    init(count: Int, filling body: (UnsafeMutableRawBufferPointer) -> Void) {
        self.count = count
        isKey = false
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        body(UnsafeMutableRawBufferPointer(rebasing: storage[0..<count]))
    }

    /// A key of `count` bytes filled by `body`, in `sodium_malloc`ed memory that no core dump
    /// includes (`MADV_DONTDUMP`) and that is locked in memory where `RLIMIT_MEMLOCK` allows.
    init(keyCount count: Int, filling body: (UnsafeMutableRawBufferPointer) -> Void) {
        Sodium.initialize()
        self.count = count
        isKey = true
        guard let base = sodium_malloc(max(count, 1)) else { fatalError("out of memory for a key") }
        storage = UnsafeMutableRawBufferPointer(start: base, count: max(count, 1))
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        body(UnsafeMutableRawBufferPointer(rebasing: storage[0..<count]))
    }

    /// `count` random bytes from libsodium, kept as a key (the internal `init(keyCount:filling:)`).
    public static func random(count: Int) -> SecretData {
        Sodium.initialize()
        return SecretData(keyCount: count) { buffer in
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
        if isKey {
            // sodium_free wipes the pages before it unmaps them.
            sodium_free(storage.baseAddress)
            return
        }
        if let base = storage.baseAddress { sodium_memzero(base, storage.count) }
        storage.deallocate()
    }
}
