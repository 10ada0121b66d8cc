import Glibc
public import KeygatePolicy
import Synchronization

/// Appends audit records to a JSON Lines file, one record a line, with the chain's head kept
/// beside it in `<path>.head` (so records cut off the end are detected).
///
/// The file is created 0600 and only ever appended to. Several processes may share it: each
/// append takes an exclusive `flock`, checks that the file still ends where the head says
/// (or one record further, after a crash between the two writes), seals the event, appends
/// it and moves the head. A file that does not end where its head says is refused
/// (`errSecIO`), so a tampered trail stops auditing instead of being extended.
///
/// Durability is a trade-off:
/// - ``Durability/eachRecord`` (the default) `fsync`s the trail and the head after every
///   record: nothing acknowledged is ever lost, at the cost of one or two disk flushes per
///   decision (milliseconds on most disks).
/// - ``Durability/groupCommit(records:)`` flushes once every N records and when the sink is
///   released: much faster for many decisions in one process, but a power loss can lose the
///   last unflushed records, and can leave the head out of step with the trail, which then
///   stops further auditing until `keygate audit verify` has been looked at (a crash of the
///   process alone loses nothing: the bytes are in the page cache).
///
/// Tamper evidence, not tamper proof: the chain shows a record deleted, edited or reordered
/// by someone who did not also rewrite everything after it and the head. Whoever can rewrite
/// both files can forge a consistent trail; ship the trail off the host (with redaction) when
/// that matters.
public final class JSONLinesAuditSink: AuditSink {
    /// How often records reach the disk.
    public enum Durability: Hashable, Sendable {
        /// `fsync` after every record.
        case eachRecord
        /// `fsync` once every N records, and when the sink is released.
        case groupCommit(records: Int)
    }

    /// The trail file.
    public let path: String
    /// The head file.
    public var headPath: String { path + ".head" }
    /// The durability in force.
    public let durability: Durability
    private let pending = Mutex(0)

    /// A sink appending to `path` (created 0600 on first use).
    public init(path: String, durability: Durability = .eachRecord) {
        self.path = path
        self.durability = durability
    }

    deinit { flush() }

    /// Forces every record written so far to the disk.
    public func flush() {
        let descriptor = open(path, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
        pending.withLock { $0 = 0 }
    }

    /// Seals and appends the record.
    @discardableResult
    public func append(_ event: AuditEvent, at time: Timestamp) throws(KeygateError) -> AuditRecord {
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw failure("cannot open \(path)") }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX) == 0 else { throw failure("cannot lock \(path)") }
        defer { flock(descriptor, LOCK_UN) }
        var head = try currentHead()
        let record = head.seal(event, at: time)
        let bytes = Array((record.line + "\n").utf8)
        let sizeBefore = lseek(descriptor, 0, SEEK_END)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                let error = failure("cannot write to \(path)")
                // Cut a torn line back off, so the trail still ends where its head says.
                if sizeBefore >= 0 { _ = ftruncate(descriptor, sizeBefore) }
                throw error
            }
            offset += written
        }
        let sync: Bool = pending.withLock { count in
            count += 1
            switch durability {
            case .eachRecord: return true
            case .groupCommit(let records): return count >= max(records, 1)
            }
        }
        if sync {
            guard fsync(descriptor) == 0 else { throw failure("cannot flush \(path)") }
            pending.withLock { $0 = 0 }
        }
        try writeHead(head, sync: sync)
        return record
    }

    /// The head, recovered after a crash between the record and the head write; fails when the
    /// trail does not end where the head says.
    private func currentHead() throws(KeygateError) -> AuditHead {
        let lastLine = try Self.lastLine(of: path)
        guard let text = Self.read(headPath) else {
            guard lastLine == nil else {
                throw KeygateError(.io, "\(headPath) is missing but \(path) has records; run 'keygate audit verify'")
            }
            return AuditHead(genesis: Sodium.random(32).hexString)
        }
        let head: AuditHead
        do {
            head = try AuditHead(line: text.trimmingTrailingNewlines, file: headPath)
        } catch {
            throw KeygateError(.io, "\(headPath) is damaged: \(error)")
        }
        guard let lastLine else {
            guard head.sequence == 0 else {
                throw KeygateError(
                    .io, "\(path) is empty but its head says \(head.sequence) records; run 'keygate audit verify'")
            }
            return head
        }
        let lastHash = Sodium.sha256(Array(lastLine.utf8)).hexString
        if lastHash == head.hash { return head }
        // One record past the head: a crash came between writing the record and the head.
        if let record = try? AuditRecord(line: lastLine, file: path, lineNumber: 0),
            record.sequence == head.sequence + 1,
            record.previousHash == head.hash
        {
            return AuditHead(genesis: head.genesis, sequence: record.sequence, hash: lastHash)
        }
        throw KeygateError(.io, "\(path) does not end where its head says; run 'keygate audit verify'")
    }

    private func writeHead(_ head: AuditHead, sync: Bool) throws(KeygateError) {
        let temporary = headPath + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw failure("cannot write \(temporary)") }
        let bytes = Array((head.line + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let synced = !sync || fsync(descriptor) == 0
        close(descriptor)
        guard written == bytes.count, synced, rename(temporary, headPath) == 0 else {
            throw failure("cannot write \(headPath)")
        }
        if sync {
            // Make the rename itself durable.
            let directory = String(headPath[..<(headPath.lastIndex(of: "/") ?? headPath.startIndex)])
            let handle = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if handle >= 0 {
                fsync(handle)
                close(handle)
            }
        }
    }

    private func failure(_ what: String) -> KeygateError {
        KeygateError(.io, "\(what): \(String(cString: strerror(errno)))")
    }

    /// The whole contents of a file, or nil when it cannot be read.
    static func read(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let got = Glibc.read(descriptor, &chunk, chunk.count)
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            bytes += chunk[0..<got]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The last non-empty line of a file, read from its end; nil for an empty or missing file.
    static func lastLine(of path: String) throws(KeygateError) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var size = lseek(descriptor, 0, SEEK_END)
        guard size > 0 else { return nil }
        var tail: [UInt8] = []
        let step: off_t = 4096
        while size > 0 {
            let start = max(size - step, 0)
            var chunk = [UInt8](repeating: 0, count: Int(size - start))
            guard pread(descriptor, &chunk, chunk.count, start) == chunk.count else {
                throw KeygateError(.io, "cannot read \(path)")
            }
            tail = chunk + tail
            size = start
            let trimmed = tail.last == 10 ? tail.dropLast() : tail[...]
            if trimmed.contains(10) || size == 0 {
                let line = trimmed.split(separator: 10, omittingEmptySubsequences: false).last ?? []
                return String(decoding: line, as: UTF8.self)
            }
        }
        return nil
    }
}

extension String {
    var trimmingTrailingNewlines: String {
        var text = self
        while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
        return text
    }
}

/// Reads a trail written by ``JSONLinesAuditSink`` back, and verifies it.
public enum AuditTrailFile {
    /// The trail's lines (without newlines); empty when the file does not exist.
    public static func lines(at path: String) -> [String] {
        guard let text = JSONLinesAuditSink.read(path) else { return [] }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty }
    }

    /// The records, parsed.
    /// - Throws: ``KeygatePolicy/InputFileError`` naming the first line that is not a record.
    public static func records(at path: String) throws(InputFileError) -> [AuditRecord] {
        var records: [AuditRecord] = []
        for (index, line) in lines(at: path).enumerated() {
            records.append(try AuditRecord(line: line, file: path, lineNumber: index + 1))
        }
        return records
    }

    /// Verifies the trail at `path` against its head file.
    public static func verify(at path: String) -> AuditVerification {
        var head: AuditHead?
        if let text = JSONLinesAuditSink.read(path + ".head") {
            do {
                head = try AuditHead(line: text.trimmingTrailingNewlines, file: path + ".head")
            } catch {
                return .broken(sequence: 1, reason: "the head file is damaged: \(error)")
            }
        } else if !lines(at: path).isEmpty {
            return .broken(sequence: 1, reason: "the head file \(path).head is missing")
        }
        return AuditVerifier.verify(lines: lines(at: path), head: head, file: path)
    }
}

/// Writes records to standard error, for debugging (its own chain, starting fresh each process).
public final class StandardErrorAuditSink: AuditSink {
    private let head = Mutex(AuditHead(genesis: Sodium.random(32).hexString))

    /// Creates it.
    public init() {}

    /// Seals the event and writes its line to standard error.
    public func append(_ event: AuditEvent, at time: Timestamp) throws(KeygateError) -> AuditRecord {
        let record = head.withLock { $0.seal(event, at: time) }
        let bytes = Array(("audit: " + record.line + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw KeygateError(.io, "cannot write the audit record to standard error") }
        return record
    }
}

/// The identity of this process, for audit records.
public enum ProcessIdentity {
    /// This process's id.
    public static var processID: Int32 { getpid() }
    /// This process's effective user id.
    public static var userID: UInt32 { geteuid() }
}
