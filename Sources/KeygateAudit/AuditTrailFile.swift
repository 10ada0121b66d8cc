import Glibc
public import KeygateItems
public import KeygatePolicy

/// Reads a trail written by ``JSONLinesAuditSink`` back, and verifies it, a chunk at a time:
/// memory stays flat however long the trail is.
public enum AuditTrailFile {
    /// The trail's lines (without newlines); empty when the file does not exist.
    /// - Throws: `errSecIO` when the trail cannot be read, is not a regular file, or (with
    ///   ``KeygateItems/FilePrivacy/ownerOnly``) is not the effective user's own and private.
    public static func lines(at path: String, privacy: FilePrivacy = .ownerOnly) throws(KeygateError) -> [String] {
        var lines: [String] = []
        try forEachLine(at: path, privacy: privacy) { line in
            lines.append(String(decoding: line, as: UTF8.self))
            return true
        }
        return lines
    }

    /// Calls `body` with each complete, non-empty line of the trail (its bytes, without the
    /// newline), in order, until it returns false. Lines longer than
    /// ``AuditRecord/maximumLineLength`` are passed cut to that length plus one byte.
    /// - Returns: the length of a partial last line (no newline: a crash during a write), or nil.
    @discardableResult
    public static func forEachLine(
        at path: String, privacy: FilePrivacy = .ownerOnly, _ body: ([UInt8]) throws(KeygateError) -> Bool
    ) throws(KeygateError) -> Int? {
        guard let descriptor = try PrivateFile.open(path, flags: O_RDONLY, privacy: privacy, status: .io) else {
            return nil
        }
        defer { close(descriptor) }
        var reader = TrailLineReader(descriptor: descriptor, path: path)
        while let line = try reader.next() {
            guard try body(line.bytes) else { return nil }
        }
        return reader.tornTail
    }

    /// Verifies the trail open at `descriptor` from its start against `head` and `anchor`,
    /// reading it in chunks: a partial last line past the head is a crash
    /// (``AuditVerification/tornTail(records:head:bytes:)``).
    ///
    /// `held` (the records the item store holds for the trail) that follow the trail's last
    /// record are checked as if they ended it: when they chain, the trail is
    /// ``AuditVerification/heldInStore(records:held:)`` (a power loss cut it short; a partial
    /// last line is taken for the start of the first of them), not cut back. A trail that
    /// runs past its head and ends exactly at the last of them is intact: that record,
    /// committed with its item, stands for the head.
    /// With `limit`, only the first `limit` bytes are read (a snapshot's: ``AuditTrailSnapshot``).
    static func verify(
        descriptor: Int32, path: String, head: AuditHead?, anchor: AuditHead?, held: [HeldAuditRecord] = [],
        limit: off_t? = nil
    ) throws(KeygateError) -> (verdict: AuditVerification, check: AuditChainCheck, tornTail: Int?) {
        var check = AuditChainCheck(head: head, anchor: anchor, file: path)
        var reader = TrailLineReader(descriptor: descriptor, path: path, limit: limit)
        while let line = try reader.next() {
            let going = line.length > line.bytes.count ? check.addOversizedLine(of: line.length) : check.add(line.bytes)
            guard going else { return (check.result, check, nil) }
        }
        let inTrail = check.records
        var restorable = 0
        for record in held where record.sequence > UInt64(inTrail) {
            guard check.add(Array(record.line.utf8)) else { return (check.result, check, reader.tornTail) }
            restorable += 1
        }
        if restorable > 0 {
            if case .broken = check.result { return (check.result, check, reader.tornTail) }
            return (.heldInStore(records: inTrail, held: restorable), check, reader.tornTail)
        }
        var verdict = check.result
        if case .headBehind(let records, _) = verdict, reader.tornTail == nil, let last = held.last,
            last.sequence == UInt64(records), check.lastHash == last.hash
        {
            // The trail ends at the last record the store holds: committed with its item, it
            // stands for the head (a sink leaves the head file behind after such a commit).
            verdict = .intact(records: records)
        }
        guard let torn = reader.tornTail, let head else { return (verdict, check, reader.tornTail) }
        switch verdict {
        case .intact(let records): return (.tornTail(records: records, head: head.sequence, bytes: torn), check, torn)
        case .headBehind(let records, let stale):
            return (.tornTail(records: records, head: stale, bytes: torn), check, torn)
        case .tornTail, .heldInStore, .broken: return (verdict, check, torn)
        }
    }

    /// The records, parsed.
    /// - Throws: ``KeygatePolicy/InputFileError`` naming the first line that is not a record, or the file
    ///   when it cannot be read.
    public static func records(at path: String, privacy: FilePrivacy = .ownerOnly) throws(InputFileError)
        -> [AuditRecord]
    {
        var records: [AuditRecord] = []
        var failure: InputFileError?
        do throws(KeygateError) {
            try forEachLine(at: path, privacy: privacy) { (line: [UInt8]) throws(KeygateError) -> Bool in
                do throws(InputFileError) {
                    records.append(try AuditRecord(line: line, file: path, lineNumber: records.count + 1))
                    return true
                } catch {
                    failure = error
                    return false
                }
            }
        } catch {
            throw InputFileError(file: path, line: 0, column: 0, field: "", problem: error.message)
        }
        if let failure { throw failure }
        return records
    }

    /// Verifies the trail at `path` against its head file, reading the trail in chunks.
    /// - Throws: `errSecIO` when either file cannot be read, is not a regular file, or (with
    ///   ``KeygateItems/FilePrivacy/ownerOnly``) is not the effective user's own and private: a trail
    ///   someone else could write proves nothing.
    ///
    /// With `anchors` (the item store the trail audits), a trail that does not reach the
    /// anchor kept there is broken too: deleted with its head, restarted, or cut back; records
    /// the store holds past the trail's end (a power loss) are checked as its continuation
    /// (``AuditVerification/heldInStore(records:held:)``).
    public static func verify(
        at path: String, anchors: (any MetadataStore)? = nil, privacy: FilePrivacy = .ownerOnly
    ) throws(KeygateError) -> AuditVerification {
        try PrivateFile.checkDirectory(of: path, privacy: privacy, status: .io)
        let descriptor = try PrivateFile.open(path, flags: O_RDONLY, privacy: privacy, status: .io)
        defer { if let descriptor { close(descriptor) } }
        let size = descriptor.map { lseek($0, 0, SEEK_END) } ?? 0
        var head: AuditHead?
        switch try AuditHeadFile.read(path + ".head", privacy: privacy) {
        case .missing:
            if size > 0 { return .broken(sequence: 1, reason: "the head file \(path).head is missing") }
        case .damaged(let problem): return .broken(sequence: 1, reason: "the head file is damaged: \(problem)")
        case .found(let found): head = found
        }
        let keeper = anchors.map { AuditAnchorKeeper(store: $0, trail: path) }
        let (anchor, held) = try keeper?.anchorAndHeldRecords() ?? (nil, [])
        guard let descriptor else { return AuditChainCheck(head: head, anchor: anchor, file: path).result }
        return try verify(descriptor: descriptor, path: path, head: head, anchor: anchor, held: held).verdict
    }
}

/// Reads a trail's lines a chunk (64 KiB) at a time: complete, non-empty lines in order, and
/// then the length of a partial last line, if any. A line longer than a record may be is not
/// kept whole: its first ``AuditRecord/maximumLineLength`` + 1 bytes and its length are given.
struct TrailLineReader {
    struct Line {
        var bytes: [UInt8]
        var length: Int
    }

    let descriptor: Int32
    let path: String
    /// How many bytes are read, nil: to the end of the file.
    let limit: off_t?
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)
    private var start = 0
    private var end = 0
    private var offset: off_t = 0
    private var atEnd = false
    /// After the last line: the length of a partial line at the end of the file, or nil.
    private(set) var tornTail: Int?

    init(descriptor: Int32, path: String, limit: off_t? = nil) {
        self.descriptor = descriptor
        self.path = path
        self.limit = limit
    }

    /// The next complete, non-empty line, or nil at the end of the file.
    mutating func next() throws(KeygateError) -> Line? {
        var partial: [UInt8] = []
        var length = 0
        let keep = AuditRecord.maximumLineLength + 1
        while true {
            if start == end {
                guard !atEnd else {
                    if length > 0 { tornTail = length }
                    return nil
                }
                try fill()
                continue
            }
            if let newline = buffer[start..<end].firstIndex(of: 10) {
                let piece = newline - start
                if length == 0 {
                    start = newline + 1
                    if piece == 0 { continue }
                    return Line(
                        bytes: Array(buffer[(newline - piece)..<min(newline, newline - piece + keep)]), length: piece)
                }
                if partial.count < keep { partial += buffer[start..<min(newline, start + keep - partial.count)] }
                length += piece
                start = newline + 1
                return Line(bytes: partial, length: length)
            }
            if partial.count < keep { partial += buffer[start..<min(end, start + keep - partial.count)] }
            length += end - start
            start = end
        }
    }

    private mutating func fill() throws(KeygateError) {
        while true {
            let wanted = limit.map { Int(min(off_t(buffer.count), max($0 - offset, 0))) } ?? buffer.count
            let got = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, wanted, offset) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else {
                throw KeygateError(.io, "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            start = 0
            end = got
            offset += off_t(got)
            atEnd = got == 0
            return
        }
    }
}
