// A raw byte cursor for rendering one audit line: each write is one capacity check
// and a copy, where appending to an `Array` checks uniqueness and capacity, and may grow it,
// at every piece of the line.

/// Writes bytes one after another into memory it is lent (never owns, never keeps), checking
/// each write against the room left. A write that does not fit writes nothing and marks the
/// cursor ``overflowed``; every write after it is ignored, so the renderer runs to its end and
/// the caller renders again into a buffer of the length it then knows (``needed``): one more
/// pass, however long the line.
struct LineCursor {
    /// Where the next byte goes.
    private let base: UnsafeMutablePointer<UInt8>
    /// How many bytes may be written.
    private let capacity: Int
    /// How many bytes were written.
    private(set) var count = 0
    /// Whether a write did not fit (the bytes written are then incomplete).
    private(set) var overflowed = false
    /// How many bytes every write so far asked for, written or not: the room the whole line needs.
    private(set) var needed = 0

    /// A cursor writing from `base`, at most `capacity` bytes.
    init(base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    /// Writes `length` bytes from `source`.
    @inline(__always)
    mutating func write(_ source: UnsafePointer<UInt8>, count length: Int) {
        needed &+= length
        guard capacity &- count >= length, !overflowed else {
            overflowed = true
            return
        }
        (base + count).update(from: source, count: length)
        count &+= length
    }

    /// Writes the bytes of `bytes`.
    @inline(__always)
    mutating func write(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let start = bytes.baseAddress else { return }
        write(start, count: bytes.count)
    }

    /// Writes `text`'s UTF-8 bytes.
    @inline(__always)
    mutating func write(_ text: StaticString) {
        write(text.utf8Start, count: text.utf8CodeUnitCount)
    }

    /// Writes one byte.
    @inline(__always)
    mutating func write(_ byte: UInt8) {
        needed &+= 1
        guard count < capacity, !overflowed else {
            overflowed = true
            return
        }
        base[count] = byte
        count &+= 1
    }

    /// Writes `digest` as 64 lowercase hexadecimal digits.
    mutating func write(hexOf digest: SHA256Digest) {
        needed &+= 64
        guard capacity &- count >= 64, !overflowed else {
            overflowed = true
            return
        }
        digest.writeHex(to: base + count)
        count &+= 64
    }

    /// The bytes written since `start` (a ``count`` read earlier), or nil when a write did not
    /// fit (they are then incomplete). Valid until the next write.
    func written(from start: Int) -> UnsafeBufferPointer<UInt8>? {
        guard !overflowed else { return nil }
        return UnsafeBufferPointer(start: base + start, count: count &- start)
    }
}
