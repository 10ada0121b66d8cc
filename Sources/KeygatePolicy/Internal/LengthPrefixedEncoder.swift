/// The one encoding Keygate hashes or authenticates a list of strings with: a versioned tag
/// and a NUL, then each part as a 4-byte big-endian length followed by its bytes. No two
/// different lists under one tag encode alike, so concatenation cannot make two inputs collide.
///
/// Used for a sealed item's associated data (KeygateStore) and an enrollment set's hash
/// (``EnrollmentSetHash``).
package struct LengthPrefixedEncoder {
    /// The encoding so far.
    package private(set) var bytes: [UInt8]

    /// Starts an encoding with `tag` (such as `keygate.item.v1`) and its terminating NUL.
    /// - Parameter capacity: the expected length of the parts, to allocate once.
    package init(tag: String, capacity: Int = 0) {
        bytes = []
        let tag = tag.utf8.span
        bytes.reserveCapacity(tag.count + 1 + capacity)
        bytes.append(addingCapacity: tag.count + 1) { out in
            for index in tag.indices { out.append(tag[index]) }
            out.append(0)
        }
    }

    /// Appends one part: its length (4 bytes, big-endian), then its UTF-8 bytes.
    ///
    /// Written through one `append(addingCapacity:)` from the string's UTF-8 span: one capacity
    /// check for the part and its length, no generic sequence copy and no append per byte (every
    /// read builds an associated data of such parts: the bench's "Gated read" rows).
    package mutating func append(_ part: String) {
        let utf8 = part.utf8.span
        let count = UInt32(truncatingIfNeeded: utf8.count)
        bytes.append(addingCapacity: 4 + utf8.count) { out in
            out.append(UInt8(truncatingIfNeeded: count >> 24))
            out.append(UInt8(truncatingIfNeeded: count >> 16))
            out.append(UInt8(truncatingIfNeeded: count >> 8))
            out.append(UInt8(truncatingIfNeeded: count))
            for index in utf8.indices { out.append(utf8[index]) }
        }
    }

    /// Appends one part given as bytes: its length (4 bytes, big-endian), then the bytes.
    package mutating func append(bytes part: some Collection<UInt8>) {
        let count = UInt32(truncatingIfNeeded: part.count)
        bytes.append(UInt8(truncatingIfNeeded: count >> 24))
        bytes.append(UInt8(truncatingIfNeeded: count >> 16))
        bytes.append(UInt8(truncatingIfNeeded: count >> 8))
        bytes.append(UInt8(truncatingIfNeeded: count))
        bytes.append(contentsOf: part)
    }
}
