import Glibc
public import KeygatePolicy
import Synchronization

/// Appends audit records to a JSON Lines file, one record a line, with the chain's head kept
/// beside it in `<path>.head` (so records cut off the end are detected).
///
/// The file is created 0600 and only ever appended to. Several processes may share it: each
/// append takes an exclusive `flock`, checks that the file still ends where the head says,
/// seals the event, appends it and moves the head. Records past the head that chain
/// correctly from it (a crash or a failed head write between a record and its head) are taken
/// over, with a ``KeygateAudit/AuditEvent/Kind/recover`` record first (``repair(at:restartingAnchor:)`` does the same on
/// demand). A file that does not chain from its head is refused (`errSecIO`), so a tampered
/// trail stops auditing instead of being extended; so is one that no longer reaches the
/// anchor kept in the store (``KeygateAudit/AuditAnchorStore``), when one is given.
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
    /// Whether the trail, its head and their directory must be the effective user's own and
    /// private (``FilePrivacy``).
    public let privacy: FilePrivacy
    /// Where the trail's anchor is kept (the item store), when anywhere.
    public let anchors: (any AuditAnchorStore)?
    private let pending = Mutex(0)

    /// A sink appending to `path` (created 0600 on first use).
    ///
    /// With ``FilePrivacy/ownerOnly`` (the default), a trail or head that belongs to another
    /// user or that others can read or write, or a directory others can write, is refused
    /// (`errSecIO`, naming the path and the fix): someone else could forge records in it. A
    /// FIFO or device in place of either file is refused, never waited on.
    ///
    /// With `anchors` (the item store,
    /// `SQLiteItemStore`, the trail audits), the trail's head is also kept
    /// there after each durable write, and a trail that no longer reaches it (deleted with its
    /// head, restarted, cut back) is refused (`errSecIO`) instead of being started afresh.
    public init(
        path: String, durability: Durability = .eachRecord, anchors: (any AuditAnchorStore)? = nil,
        privacy: FilePrivacy = .ownerOnly
    ) {
        self.path = path
        self.durability = durability
        self.anchors = anchors
        self.privacy = privacy
    }

    deinit { flush() }

    /// Forces every record written so far to the disk.
    public func flush() {
        let descriptor = open(path, O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
        pending.withLock { $0 = 0 }
    }

    /// Seals and appends the record. When earlier records were written past the head (a crash
    /// or a failed head write), the head is first brought forward over them and a ``KeygateAudit/AuditEvent/Kind/recover``
    /// record says so.
    @discardableResult
    public func append(_ event: AuditEvent, at time: Timestamp) throws(KeygateError) -> AuditRecord {
        guard let record = try write(event, at: time).record else {
            throw KeygateError(.internalError, "the audit record was not written")
        }
        return record
    }

    /// Brings the head forward over records written past it (a crash or a failed head write),
    /// and records that as a ``KeygateAudit/AuditEvent/Kind/recover`` record, as the next append would.
    /// - Returns: what was done, or nil when the head was where the trail ends.
    /// - Throws: `errSecIO` when the trail does not chain from its head (tampering is never
    ///   repaired) or cannot be written.
    ///
    /// With `restartingAnchor`, a trail that no longer reaches the anchor kept in the store (it
    /// was deleted with its head, or restarted) is accepted as it is, provided its own chain is
    /// intact: a ``KeygateAudit/AuditEvent/Kind/recover`` record names the anchor it replaces, and the anchor
    /// moves to the trail. Only ever done when asked (`keygate audit repair --restart`).
    @discardableResult
    public func repair(at time: Timestamp, restartingAnchor: Bool = false) throws(KeygateError) -> AuditRepair? {
        try write(nil, at: time, restartingAnchor: restartingAnchor).repair
    }

    /// Appends `event` (when given) under the lock, after a recovery record when one is due.
    private func write(_ event: AuditEvent?, at time: Timestamp, restartingAnchor: Bool = false) throws(KeygateError)
        -> (record: AuditRecord?, repair: AuditRepair?)
    {
        try PrivateFile.checkDirectory(of: path, privacy: privacy, status: .io)
        guard
            let descriptor = try PrivateFile.open(
                path, flags: O_WRONLY | O_APPEND | O_CREAT, privacy: privacy, status: .io)
        else { throw failure("cannot open \(path)") }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX) == 0 else { throw failure("cannot lock \(path)") }
        defer { flock(descriptor, LOCK_UN) }
        var (head, recovery, isNew) = try currentHead()
        let anchor = try anchors?.auditAnchor(for: path)
        var replacedAnchor: String?
        if let anchor, let problem = head.mismatch(with: anchor) {
            guard restartingAnchor else { throw KeygateError(.io, "\(path): \(problem); run 'keygate audit verify'") }
            replacedAnchor = problem
        }
        // A new trail's head is written before its first record: a crash never leaves records without one.
        if isNew { try writeHead(head, sync: true) }
        if let torn = recovery?.tornBytes, torn > 0 {
            let size = lseek(descriptor, 0, SEEK_END)
            guard size >= torn, ftruncate(descriptor, size - off_t(torn)) == 0 else {
                throw failure("cannot cut the partial record off \(path)")
            }
        }
        var lines: [String] = []
        var repair: AuditRepair?
        if let recovery {
            let event = Self.recoveryEvent(from: recovery.staleHead, to: head.sequence, tornBytes: recovery.tornBytes)
            let record = head.seal(event, at: time)
            lines.append(record.line)
            repair = AuditRepair(
                staleHead: recovery.staleHead, recovered: recovery.records, record: record.sequence,
                tornBytes: recovery.tornBytes)
        }
        if let replacedAnchor {
            let before = head.sequence
            let event = AuditEvent(
                kind: .recover, decision: "restarted",
                reasons: [
                    "anchorRestarted: \(replacedAnchor); this trail was accepted as it is by "
                        + "'keygate audit repair --restart'"
                ], processID: ProcessIdentity.processID, userID: ProcessIdentity.userID)
            let record = head.seal(event, at: time)
            lines.append(record.line)
            repair = AuditRepair(
                staleHead: repair?.staleHead ?? before, recovered: repair?.recovered ?? 0, record: record.sequence,
                tornBytes: repair?.tornBytes ?? 0, anchorRestarted: true)
        }
        var record: AuditRecord?
        if let event {
            let sealed = head.seal(event, at: time)
            lines.append(sealed.line)
            record = sealed
        }
        for line in lines where line.utf8.count > AuditRecord.maximumLineLength {
            throw KeygateError(
                .io,
                "the audit record would be \(line.utf8.count) bytes, longer than the \(AuditRecord.maximumLineLength) "
                    + "a trail line may hold; nothing was written")
        }
        guard !lines.isEmpty else {
            if let anchors, anchor != head {
                guard fsync(descriptor) == 0 else { throw failure("cannot flush \(path)") }
                try anchors.saveAuditAnchor(head, for: path)
            }
            return (nil, nil)
        }
        try appendLines(lines, to: descriptor)
        let sync: Bool = pending.withLock { count in
            count += lines.count
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
        // The anchor follows only what is durable, so it may lag the trail but never leads it.
        if sync, let anchors { try anchors.saveAuditAnchor(head, for: path) }
        return (record, repair)
    }

    /// Appends whole lines in one write, cutting a torn write back off.
    private func appendLines(_ lines: [String], to descriptor: Int32) throws(KeygateError) {
        let bytes = Array(lines.map { $0 + "\n" }.joined().utf8)
        let sizeBefore = lseek(descriptor, 0, SEEK_END)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                let error = failure("cannot write to \(path)")
                // Cut a torn line back off, so the trail still ends where its head says.
                if sizeBefore >= 0 { _ = ftruncate(descriptor, sizeBefore) }
                throw error
            }
            offset += written
        }
    }

    static func recoveryEvent(from staleHead: UInt64, to last: UInt64, tornBytes: Int) -> AuditEvent {
        var reasons: [String] = []
        if last > staleHead {
            reasons.append(
                "headRecovered: the head was at record \(staleHead); records \(staleHead + 1)…\(last) chain from it "
                    + "but were not in the head (a crash or a failed head write), so the head was moved to \(last)")
        }
        if tornBytes > 0 {
            reasons.append(
                "tornTailCut: a partial record of \(tornBytes) bytes past the head (a crash during a write) was cut off"
            )
        }
        return AuditEvent(
            kind: .recover, decision: "recovered", reasons: reasons, processID: ProcessIdentity.processID,
            userID: ProcessIdentity.userID)
    }

    /// What a recovery takes over: records past the stale head, and a torn partial line.
    private struct Recovery {
        var staleHead: UInt64
        var records: UInt64
        var tornBytes: Int
    }

    /// The head, and what must be recovered first: records written past the head (a crash or
    /// a failed head write) that chain correctly from it, and a partial last line past the head
    /// (a crash during a write), which the caller cuts off. A new trail's head is
    /// written (by the caller) before its first record, so a crash never leaves records
    /// without a head.
    /// - Throws: `errSecIO` when the trail does not chain from its head (tampering).
    private func currentHead() throws(KeygateError) -> (
        head: AuditHead, recovery: Recovery?, isNew: Bool
    ) {
        let lastLine = try Self.lastLine(of: path, privacy: privacy)
        guard let text = try Self.read(headPath, privacy: privacy) else {
            guard lastLine == nil else {
                throw KeygateError(.io, "\(headPath) is missing but \(path) has records; run 'keygate audit verify'")
            }
            return (AuditHead(genesis: AuditCrypto.random(32).hexString), nil, true)
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
            return (head, nil, false)
        }
        let lastHash = AuditCrypto.sha256Hex(lastLine.line.utf8)
        if lastHash == head.hash && lastLine.terminated { return (head, nil, false) }
        // Records past the head: taken over when the whole trail chains and they follow the head.
        let contents = try AuditTrailFile.contents(at: path, privacy: privacy)
        if case .broken(let sequence, let reason) = AuditTrailFile.verify(contents, head: head, anchor: nil, file: path)
        {
            throw KeygateError(
                .io,
                "\(path) does not end where its head says (broken at sequence \(sequence): \(reason)); "
                    + "run 'keygate audit verify'")
        }
        // Not broken: every complete line chains, and the head is one of them.
        var current = head
        var recovery = Recovery(staleHead: head.sequence, records: 0, tornBytes: 0)
        let records = UInt64(contents.lines.count)
        if records > head.sequence, let last = contents.lines.last {
            current = AuditHead(
                genesis: head.genesis, sequence: records, hash: AuditCrypto.sha256Hex(last.utf8))
            recovery.records = records - head.sequence
        }
        recovery.tornBytes = contents.tornTail ?? 0
        return (current, recovery.records > 0 || recovery.tornBytes > 0 ? recovery : nil, false)
    }

    private func writeHead(_ head: AuditHead, sync: Bool) throws(KeygateError) {
        let temporary = headPath + ".tmp"
        guard
            let descriptor = try PrivateFile.open(
                temporary, flags: O_WRONLY | O_CREAT | O_TRUNC, privacy: privacy, status: .io)
        else { throw failure("cannot write \(temporary)") }
        let bytes = Array((head.line + "\n").utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
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

    /// The whole contents of a file (a private regular file), or nil when it does not exist.
    static func read(_ path: String, privacy: FilePrivacy) throws(KeygateError) -> String? {
        try readBytes(path, privacy: privacy).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The whole contents of a file (a private regular file) as bytes, or nil when it does not exist.
    static func readBytes(_ path: String, privacy: FilePrivacy) throws(KeygateError) -> [UInt8]? {
        guard let descriptor = try PrivateFile.open(path, flags: O_RDONLY, privacy: privacy, status: .io) else {
            return nil
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let got = Glibc.read(descriptor, &chunk, chunk.count)
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw KeygateError(.io, "cannot read \(path): \(String(cString: strerror(errno)))") }
            guard got > 0 else { break }
            bytes += chunk[0..<got]
        }
        return bytes
    }

    /// The last non-empty line of a file, read from its end, and whether a newline ends it;
    /// nil for an empty or missing file.
    static func lastLine(of path: String, privacy: FilePrivacy) throws(KeygateError) -> (
        line: String, terminated: Bool
    )? {
        guard let descriptor = try PrivateFile.open(path, flags: O_RDONLY, privacy: privacy, status: .io) else {
            return nil
        }
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
                return (String(decoding: line, as: UTF8.self), tail.last == 10)
            }
            // Read no further back than the longest line a trail may hold.
            guard trimmed.count <= AuditRecord.maximumLineLength else {
                throw KeygateError(
                    .io,
                    "the last line of \(path) is longer than \(AuditRecord.maximumLineLength) bytes; "
                        + "run 'keygate audit verify'")
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

/// What ``JSONLinesAuditSink/repair(at:restartingAnchor:)`` (or an append that recovered first) did.
public struct AuditRepair: Hashable, Sendable {
    /// The sequence number the head was at.
    public let staleHead: UInt64
    /// How many records past it the head was moved over.
    public let recovered: UInt64
    /// The sequence number of the ``KeygateAudit/AuditEvent/Kind/recover`` record that says so.
    public let record: UInt64

    /// The length of a partial last line (a crash during a write) that was cut off, or 0.
    public let tornBytes: Int

    /// Whether the store's anchor was replaced by this trail's head (`restartingAnchor`).
    public let anchorRestarted: Bool

    /// A repair report.
    public init(
        staleHead: UInt64, recovered: UInt64, record: UInt64, tornBytes: Int = 0, anchorRestarted: Bool = false
    ) {
        self.staleHead = staleHead
        self.recovered = recovered
        self.record = record
        self.tornBytes = tornBytes
        self.anchorRestarted = anchorRestarted
    }
}

/// Reads a trail written by ``JSONLinesAuditSink`` back, and verifies it.
public enum AuditTrailFile {
    /// The trail's lines (without newlines); empty when the file does not exist.
    /// - Throws: `errSecIO` when the trail cannot be read, is not a regular file, or (with
    ///   ``FilePrivacy/ownerOnly``) is not the effective user's own and private.
    public static func lines(at path: String, privacy: FilePrivacy = .ownerOnly) throws(KeygateError) -> [String] {
        guard let text = try JSONLinesAuditSink.read(path, privacy: privacy) else { return [] }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty }
    }

    /// A trail's complete (newline-terminated, non-empty) lines, and the byte length of a
    /// partial last line without its newline, when there is one (a crash during a write).
    struct Contents {
        var lines: [String]
        var tornTail: Int?
    }

    static func contents(at path: String, privacy: FilePrivacy) throws(KeygateError) -> Contents {
        guard let bytes = try JSONLinesAuditSink.readBytes(path, privacy: privacy), !bytes.isEmpty else {
            return Contents(lines: [], tornTail: nil)
        }
        var parts = bytes.split(separator: 10, omittingEmptySubsequences: false)
        var torn: Int?
        if bytes.last != 10, let last = parts.popLast() { torn = last.count }
        let lines = parts.filter { !$0.isEmpty }.map { String(decoding: $0, as: UTF8.self) }
        return Contents(lines: lines, tornTail: torn)
    }

    /// Verifies `contents`: a partial last line past the head is a crash (``AuditVerification/tornTail(records:head:bytes:)``).
    static func verify(_ contents: Contents, head: AuditHead?, anchor: AuditHead?, file: String) -> AuditVerification {
        let verdict = AuditVerifier.verify(lines: contents.lines, head: head, anchor: anchor, file: file)
        guard let torn = contents.tornTail, let head else { return verdict }
        switch verdict {
        case .intact(let records): return .tornTail(records: records, head: head.sequence, bytes: torn)
        case .headBehind(let records, let stale): return .tornTail(records: records, head: stale, bytes: torn)
        case .tornTail, .broken: return verdict
        }
    }

    /// The records, parsed.
    /// - Throws: ``KeygatePolicy/InputFileError`` naming the first line that is not a record, or the file
    ///   when it cannot be read.
    public static func records(at path: String, privacy: FilePrivacy = .ownerOnly) throws(InputFileError)
        -> [AuditRecord]
    {
        let lines: [String]
        do {
            lines = try Self.lines(at: path, privacy: privacy)
        } catch {
            throw InputFileError(file: path, line: 0, column: 0, field: "", problem: error.message)
        }
        var records: [AuditRecord] = []
        for (index, line) in lines.enumerated() {
            records.append(try AuditRecord(line: line, file: path, lineNumber: index + 1))
        }
        return records
    }

    /// Verifies the trail at `path` against its head file.
    /// - Throws: `errSecIO` when either file cannot be read, is not a regular file, or (with
    ///   ``FilePrivacy/ownerOnly``) is not the effective user's own and private: a trail
    ///   someone else could write proves nothing.
    ///
    /// With `anchors` (the item store the trail audits), a trail that does not reach the
    /// anchor kept there is broken too: deleted with its head, restarted, or cut back.
    public static func verify(
        at path: String, anchors: (any AuditAnchorStore)? = nil, privacy: FilePrivacy = .ownerOnly
    ) throws(KeygateError) -> AuditVerification {
        try PrivateFile.checkDirectory(of: path, privacy: privacy, status: .io)
        let contents = try contents(at: path, privacy: privacy)
        var head: AuditHead?
        if let text = try JSONLinesAuditSink.read(path + ".head", privacy: privacy) {
            do {
                head = try AuditHead(line: text.trimmingTrailingNewlines, file: path + ".head")
            } catch {
                return .broken(sequence: 1, reason: "the head file is damaged: \(error)")
            }
        } else if !contents.lines.isEmpty || contents.tornTail != nil {
            return .broken(sequence: 1, reason: "the head file \(path).head is missing")
        }
        let anchor = try anchors?.auditAnchor(for: path)
        return verify(contents, head: head, anchor: anchor, file: path)
    }
}

/// Writes records to standard error, for debugging (its own chain, starting fresh each process).
public final class StandardErrorAuditSink: AuditSink {
    private let head = Mutex(AuditHead(genesis: AuditCrypto.random(32).hexString))

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
