import Dispatch
import Glibc
import KeygatePolicy
import Synchronization

// Writing to the trail: lines appended whole or not at all, and the head written in place.

extension JSONLinesAuditSink {
    /// Appends the lines of `records`, each followed by a newline: one record by one `writev` of
    /// its line's own bytes (no copy); several in writes of up to ``writeChunk`` bytes (a list's
    /// records run to tens of megabytes, which one buffer would hold a second time). All of them
    /// or, when a write fails, none: what this call wrote is cut back off.
    /// - Returns: how many bytes were written.
    /// - Throws: `errSecIO` when a line is longer than a trail may hold (nothing is written)
    ///   or a write fails.
    func append(_ records: [AuditRecord], to descriptor: Int32, size: off_t) throws(KeygateError) -> Int {
        for record in records where record.line.utf8.count > AuditRecord.maximumLineLength {
            throw KeygateError(
                .io,
                "the audit record would be \(record.line.utf8.count) bytes, longer than the "
                    + "\(AuditRecord.maximumLineLength) a trail line may hold; nothing was written")
        }
        if records.count == 1 { return try append(line: records[0].line, to: descriptor, end: size) }
        var chunk: [UInt8] = []
        chunk.reserveCapacity(min(Self.writeChunk, records.reduce(0) { $0 + $1.line.utf8.count + 1 }))
        var written = 0
        for record in records {
            if !chunk.isEmpty && chunk.count + record.line.utf8.count + 1 > Self.writeChunk {
                try append(chunk, to: descriptor, size: size)
                written += chunk.count
                chunk.removeAll(keepingCapacity: true)
            }
            chunk += record.line.utf8
            chunk.append(10)
        }
        // `size`, not the chunk's start: a failed write cuts every line of this call back off.
        try append(chunk, to: descriptor, size: size)
        return written + chunk.count
    }

    /// The most bytes of several records gathered for one write.
    static let writeChunk = 1 << 20

    /// Appends `line` and a newline to the trail, which ends at `end`: the line's own bytes and
    /// the newline gathered by one `writev`; after a short write (a full disk, a signal), cut
    /// back to `end` and written whole again.
    /// - Returns: how many bytes were written.
    func append(line: String, to descriptor: Int32, end: off_t) throws(KeygateError) -> Int {
        var line = line
        let total = line.utf8.count + 1
        let written = line.withUTF8 { (text: UnsafeBufferPointer<UInt8>) -> Int in
            var newline: UInt8 = 10
            return withUnsafeMutablePointer(to: &newline) { (final: UnsafeMutablePointer<UInt8>) -> Int in
                var pieces = [
                    iovec(iov_base: UnsafeMutableRawPointer(mutating: text.baseAddress), iov_len: text.count),
                    iovec(iov_base: UnsafeMutableRawPointer(final), iov_len: 1),
                ]
                var result = 0
                repeat {
                    result = writev(descriptor, &pieces, 2)
                } while result < 0 && errno == EINTR
                return result
            }
        }
        if written == total { return total }
        if written < 0 {
            let error = failure("cannot write to \(path)")
            _ = ftruncate(descriptor, end)
            throw error
        }
        _ = ftruncate(descriptor, end)
        try append(Array(line.utf8) + [10], to: descriptor, size: end)
        return total
    }

    /// Appends `bytes` in one write (retried until all are written), cutting a torn write back off.
    func append(_ bytes: [UInt8], to descriptor: Int32, size: off_t) throws(KeygateError) {
        try bytes.withUnsafeBufferPointer { (all: UnsafeBufferPointer<UInt8>) throws(KeygateError) in
            try append(UnsafeRawBufferPointer(all), to: descriptor, size: size)
        }
    }

    /// Appends `bytes` in one write (retried until all are written), cutting a torn write back off.
    func append(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32, size: off_t) throws(KeygateError) {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                let error = failure("cannot write to \(path)")
                // Cut a torn line back off, so the trail still ends where its head says.
                _ = ftruncate(descriptor, size)
                throw error
            }
            offset += written
        }
    }

    /// Writes `head` in place over the last one.
    func writeHead(_ head: AuditHead, state: inout State) throws(KeygateError) {
        guard !Self.headWritesFail(path) else { throw KeygateError(.io, "cannot write \(headPath): a test fault") }
        let bytes = AuditHeadFile.bytes(of: head)
        var written = 0
        repeat {
            written = bytes.withUnsafeBytes { pwrite(state.headFile, $0.baseAddress, $0.count, 0) }
        } while written < 0 && errno == EINTR
        guard written == bytes.count else { throw failure("cannot write \(headPath)") }
    }

    /// Trails whose head writes fail, to prove what a failed head write (a full disk, EIO)
    /// leaves: in this process, and in debug builds also the trail named by
    /// `KEYGATE_TEST_FAIL_HEAD_WRITES` (for tests that run the `keygate` binary). Tests only:
    /// a fault can only make auditing, and so the decision, fail.
    static let failingHeadWrites = Mutex<Set<String>>([])

    static func headWritesFail(_ path: String) -> Bool {
        if failingHeadWrites.withLock({ !$0.isEmpty && $0.contains(path) }) { return true }
        #if DEBUG
            if let named = getenv("KEYGATE_TEST_FAIL_HEAD_WRITES") { return String(cString: named) == path }
        #endif
        return false
    }

    func failure(_ what: String) -> KeygateError {
        KeygateError(.io, "\(what): \(String(cString: strerror(errno)))")
    }
}
