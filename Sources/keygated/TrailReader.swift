import Glibc
import KeygatePolicy
import KeygateProtocol
import KeygateStore

/// Reads a uid's trail for ``UserAuditTrail``'s `show` and `verify`: the first `size` bytes of
/// a descriptor (a snapshot's length), a 64 KiB chunk at a time, forwards or from the end.
/// Memory does not grow with the trail.
enum TrailReader {
    private static let chunkSize = 1 << 16

    /// The head in the head file at `path`, or nil when it is missing or is not a head (the
    /// slow path then says why).
    static func head(at path: String) -> AuditHead? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        var text = bytes[..<count]
        while let last = text.last, last == 10 || last == 13 || last == 32 { text = text.dropLast() }
        return try? AuditHead(line: String(decoding: text, as: UTF8.self), file: "the trail's head")
    }

    /// Calls `body` with each complete, non-empty line among the first `size` bytes, in order,
    /// and its length (a line longer than a record may be is passed cut to
    /// ``KeygateAudit/AuditRecord/maximumLineLength`` + 1 bytes), until it returns false; calls
    /// `partial` when those bytes end in a line without its newline, or the file is shorter.
    static func lines(
        _ descriptor: Int32, size: off_t, _ body: ([UInt8], Int) -> Bool, partial: () -> Void
    ) throws(KeygateError) {
        let keep = AuditRecord.maximumLineLength + 1
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        var line: [UInt8] = []
        var length = 0
        var offset: off_t = 0
        while offset < size {
            let wanted = Int(min(off_t(chunkSize), size - offset))
            let got = try read(descriptor, into: &chunk, count: wanted, at: offset)
            guard got > 0 else {
                partial()
                return
            }
            offset += off_t(got)
            var start = 0
            while start < got {
                let end = chunk[start..<got].firstIndex(of: 10) ?? got
                if line.count < keep { line += chunk[start..<min(end, start + keep - line.count)] }
                length += end - start
                if end < got {
                    if length > 0, !body(line, length) { return }
                    line.removeAll(keepingCapacity: true)
                    length = 0
                }
                start = end + 1
            }
        }
        if length > 0 { partial() }
    }

    /// Calls `body` with each complete, non-empty line among the first `size` bytes, newest
    /// first, until it returns false. Bytes after the last newline (a partial record) are skipped.
    /// - Throws: `errSecAllocate` for a line longer than any reply may hold; `errSecIO` when
    ///   the trail cannot be read.
    static func linesBackwards(
        _ descriptor: Int32, size: off_t, _ body: ([UInt8]) -> Bool
    ) throws(KeygateError) {
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        // The end of the line being read (its bytes after this chunk), and whether a newline
        // was seen yet: before the first, the bytes are a partial record and are dropped.
        var pending: [UInt8] = []
        var terminated = false
        var position = size
        while position > 0 {
            let start = max(0, position - off_t(chunkSize))
            let wanted = Int(position - start)
            let got = try read(descriptor, into: &chunk, count: wanted, at: start)
            guard got == wanted else { throw KeygateError(.io, "the trail changed while it was read") }
            var end = got
            var index = got - 1
            while index >= 0 {
                if chunk[index] == 10 {
                    if terminated {
                        let line = Array(chunk[(index + 1)..<end]) + pending
                        if !line.isEmpty, !body(line) { return }
                    }
                    terminated = true
                    pending.removeAll(keepingCapacity: true)
                    end = index
                }
                index -= 1
            }
            pending = Array(chunk[0..<end]) + pending
            guard pending.count <= FrameLimits.hardMaximumLength else {
                throw KeygateError(.allocate, "a line of the trail is longer than any reply may hold")
            }
            position = start
        }
        if terminated, !pending.isEmpty { _ = body(pending) }
    }

    /// `pread` of `count` bytes at `offset` (retried on EINTR, short only at the end of the file).
    private static func read(
        _ descriptor: Int32, into chunk: inout [UInt8], count: Int, at offset: off_t
    ) throws(KeygateError) -> Int {
        var total = 0
        while total < count {
            let got = chunk.withUnsafeMutableBytes { raw in
                pread(descriptor, raw.baseAddress! + total, count - total, offset + off_t(total))
            }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw KeygateError(.io, "the trail cannot be read (errno \(errno))") }
            if got == 0 { break }
            total += got
        }
        return total
    }
}
