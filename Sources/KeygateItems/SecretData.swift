import Glibc

/// Secret bytes (an item's value, a key) in memory Keygate owns and wipes.
///
/// The bytes live in a `malloc`ed buffer overwritten with `explicit_bzero` on release, are read
/// only inside ``withUnsafeBytes(_:)``, compare in constant time, and never appear in a
/// `description`, an error or a log line. A key (``random(count:)``, a key read from its file,
/// a key derived from a passphrase) lives in pages of its own instead, locked in memory where
/// the limit allows and marked `MADV_DONTDUMP`, so no core dump carries it.
public final class SecretData: @unchecked Sendable, Equatable, CustomStringConvertible {
    // Immutable after init; wiped and freed once, in deinit.
    private let storage: UnsafeMutableRawBufferPointer
    /// The number of bytes.
    public let count: Int
    /// The mapping of a key's storage (`mmap`ed pages, excluded from core dumps); nil for a value.
    private let pages: UnsafeMutableRawBufferPointer?

    /// Copies `bytes`. Wipe your own copy afterwards if you can.
    public init(bytes: some Collection<UInt8>) {
        count = bytes.count
        pages = nil
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        _ = storage.initializeMemory(as: UInt8.self, from: bytes)
    }

    /// Copies the UTF-8 bytes of `text`.
    public convenience init(_ text: String) { self.init(bytes: Array(text.utf8)) }

    /// `count` bytes filled by `body`, which receives the whole buffer to write.
    package init(count: Int, filling body: (UnsafeMutableRawBufferPointer) -> Void) {
        self.count = count
        pages = nil
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        body(UnsafeMutableRawBufferPointer(rebasing: storage[0..<count]))
    }

    /// A key of `count` bytes filled by `body`, in pages of its own that no core dump includes
    /// (`MADV_DONTDUMP`) and that are locked in memory where `RLIMIT_MEMLOCK` allows.
    package init(keyCount count: Int, filling body: (UnsafeMutableRawBufferPointer) -> Void) {
        self.count = count
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        let length = (max(count, 1) + pageSize - 1) / pageSize * pageSize
        let mapped = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let mapped, mapped != MAP_FAILED else { fatalError("out of memory for a key") }
        _ = madvise(mapped, length, MADV_DONTDUMP)
        _ = mlock(mapped, length)
        pages = UnsafeMutableRawBufferPointer(start: mapped, count: length)
        storage = UnsafeMutableRawBufferPointer(start: mapped, count: max(count, 1))
        body(UnsafeMutableRawBufferPointer(rebasing: storage[0..<count]))
    }

    /// `count` random bytes from the kernel (`getrandom`), kept as a key (in pages no core dump includes).
    public static func random(count: Int) -> SecretData {
        SecretData(keyCount: count) { buffer in
            var generator = SystemRandomNumberGenerator()
            var offset = 0
            while offset < buffer.count {
                var word = generator.next() as UInt64
                let take = min(8, buffer.count - offset)
                Swift.withUnsafeBytes(of: &word) { source in
                    for index in 0..<take { buffer[offset + index] = source[index] }
                }
                explicit_bzero(&word, MemoryLayout<UInt64>.size)
                offset += take
            }
        }
    }

    /// Lends the bytes for the duration of `body`; do not let them escape.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage[0..<count]))
    }

    /// A copy of the bytes as an array, for writing them out (stdout, a file). The caller owns
    /// the copy and should wipe it (`SecretData.wipe`) when done.
    public func copyBytes() -> [UInt8] { withUnsafeBytes { Array($0) } }

    /// Overwrites an array's bytes with zeros (`explicit_bzero`: not optimised away).
    public static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } }
    }

    /// Constant-time comparison: the time depends on the lengths only, never on where the bytes differ.
    public static func == (lhs: SecretData, rhs: SecretData) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.withUnsafeBytes { a in
            rhs.withUnsafeBytes { b in
                var difference: UInt8 = 0
                for index in 0..<a.count { difference |= a[index] ^ b[index] }
                return difference == 0
            }
        }
    }

    /// `<SecretData: N bytes>`; never the bytes.
    public var description: String { "<SecretData: \(count) bytes>" }

    deinit {
        if let pages, let base = pages.baseAddress {
            explicit_bzero(base, pages.count)
            munlock(base, pages.count)
            munmap(base, pages.count)
            return
        }
        if let base = storage.baseAddress { explicit_bzero(base, storage.count) }
        storage.deallocate()
    }
}
