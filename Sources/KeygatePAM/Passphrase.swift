import Glibc

/// A passphrase held in memory Keygate owns and wipes.
///
/// The bytes live in a `malloc`ed buffer that is overwritten with `explicit_bzero` when the
/// value is released, and can only be read inside ``withUnsafeBytes(_:)``. Its `description`
/// never shows them. A passphrase ends at its first NUL byte when handed to PAM.
public final class Passphrase: @unchecked Sendable, CustomStringConvertible {
    // Immutable after init; freed and wiped once, in deinit.
    private let buffer: UnsafeMutableRawBufferPointer

    /// Copies `bytes` into wiped-on-release memory. Wipe your own copy afterwards.
    public init(bytes: some Collection<UInt8>) {
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        raw.initializeMemory(as: UInt8.self, repeating: 0)
        _ = raw.initializeMemory(as: UInt8.self, from: bytes)
        buffer = UnsafeMutableRawBufferPointer(rebasing: raw[0..<bytes.count])
        storage = raw
    }

    /// Copies the UTF-8 of `text` (for programmatic sources; Swift strings cannot be wiped).
    public convenience init(_ text: String) {
        self.init(bytes: Array(text.utf8))
    }

    private let storage: UnsafeMutableRawBufferPointer

    /// The number of bytes.
    public var count: Int { buffer.count }

    /// Lends the bytes for the duration of `body`; do not let them escape.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(buffer))
    }

    /// A fresh `malloc`ed, NUL-terminated copy for PAM, which frees (and its modules wipe) it.
    func makeUnsafeCStringCopy() -> UnsafeMutablePointer<CChar>? {
        guard let copy = malloc(buffer.count + 1) else { return nil }
        if let base = buffer.baseAddress { memcpy(copy, base, buffer.count) }
        copy.storeBytes(of: 0, toByteOffset: buffer.count, as: UInt8.self)
        return copy.assumingMemoryBound(to: CChar.self)
    }

    /// Always `<Passphrase: redacted>`.
    public var description: String { "<Passphrase: redacted>" }

    deinit {
        if let base = storage.baseAddress { explicit_bzero(base, storage.count) }
        storage.deallocate()
    }
}
