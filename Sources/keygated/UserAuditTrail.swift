import Glibc
import Keygate
import KeygateLinux
import KeygatePolicy
import KeygateProtocol
import KeygateServing
import KeygateStore
import Synchronization

/// The audit trail of one uid: `users/<uid>/audit.jsonl` and its head `audit.jsonl.head`, beside
/// the uid's store (root-owned, 0600 in a 0700 directory), its anchor kept in that store.
///
/// One per uid, shared by all of the uid's connections: every record goes through ``append(_:at:)``
/// under one lock, so concurrent connections never interleave or fork the chain, and each is
/// `fsync`ed before the decision it records takes effect (``JSONLinesAuditSink/Durability/eachRecord``):
/// an acknowledged decision's record survives `kill -9` of the daemon.
///
/// A record that cannot be written denies the decision (the connection's ``Auditor`` is
/// required) and is logged. A trail someone else edited, cut back, replaced or deleted no longer
/// chains, ends at its head or reaches its anchor: it is refused, never extended or started
/// afresh (see `checkUnchanged`), so every audited request of that uid answers `errSecIO`
/// until an administrator has looked at it (`keygate --embedded --store DIR/users/<uid>/items.db
/// audit verify|repair`, as root).
/// What a client is told never names a path.
final class UserAuditTrail: AuditSink {
    let uid: UInt32
    /// The trail file.
    let path: String
    private let directory: String
    private let sink: JSONLinesAuditSink
    private let anchors: any MetadataStore
    /// Held while records are appended, and while a reader takes its snapshot.
    private let lock = Mutex(WriterState())
    /// The largest reply frame, for ``show(limit:)``.
    private let maximumFrameLength: Int
    /// Called right after each append, under the uid's lock but after the sink released its
    /// `flock`: where another writer's record could slip in (tests put one there).
    private let afterAppend: @Sendable () -> Void

    /// The trail of `uid` in `directory` (the uid's state directory), anchored in `anchors`;
    /// `afterAppend` runs after each append (a test's hook; nothing by default).
    init(
        uid: UInt32, directory: String, anchors: any MetadataStore, maximumFrameLength: Int,
        afterAppend: @escaping @Sendable () -> Void = {}
    ) {
        self.uid = uid
        self.directory = directory
        self.path = directory + "/audit.jsonl"
        self.anchors = anchors
        self.sink = JSONLinesAuditSink(path: path, durability: .eachRecord, anchors: anchors)
        self.maximumFrameLength = maximumFrameLength
        self.afterAppend = afterAppend
    }

    /// The auditor of one connection: records written here, each naming the daemon as the
    /// process that decided and `identity` (the kernel's view of the peer) as the caller. A
    /// record listing a proof the request reused notes it (``AuditEvent`` does, from the
    /// proof's origin).
    func auditor(for identity: PeerIdentity) -> Auditor {
        Auditor(
            sink: self, isRequired: true,
            executable: CurrentProcess.executable,
            caller: AuditCaller(
                userID: identity.uid, processID: identity.pid, executable: identity.executable,
                session: identity.session))
    }

    /// Seals and appends one record, durably, under the uid's lock.
    @discardableResult
    func append(_ event: AuditEvent, at time: Timestamp) throws(KeygateError) -> AuditRecord {
        try appending(event) { () throws(KeygateError) -> AuditRecord in try sink.append(event, at: time) }
    }

    /// Seals and appends the records of one call together, durably, under the uid's lock.
    @discardableResult
    func append(contentsOf events: [AuditEvent], at time: Timestamp) throws(KeygateError) -> [AuditRecord] {
        try appending(events.first) { () throws(KeygateError) -> [AuditRecord] in
            try sink.append(contentsOf: events, at: time)
        }
    }

    /// Seals and stores one record under the uid's lock; inside a facade `call` the file sink
    /// holds it for the call's item write, as embedded mode does (durable when the call settles).
    func store(_ event: AuditEvent, at time: Timestamp, in call: AuditCall?) throws(KeygateError) {
        try appending(event) { () throws(KeygateError) in try sink.store(event, at: time, in: call) }
    }

    /// Seals and stores the records of one call together under the uid's lock, as ``store(_:at:in:)``.
    func store(contentsOf events: [AuditEvent], at time: Timestamp, in call: AuditCall?) throws(KeygateError) {
        try appending(events.first) { () throws(KeygateError) in
            try sink.store(contentsOf: events, at: time, in: call)
        }
    }

    /// Runs `write` (an append to the sink) under the uid's lock, after checking the trail is as
    /// this trail left it, and notes how the write left it; a failure is logged naming `event`.
    private func appending<T>(_ event: AuditEvent?, _ write: () throws(KeygateError) -> T) throws(KeygateError) -> T {
        try lock.withLock { state throws(KeygateError) -> T in
            do throws(KeygateError) {
                try checkUnchanged(&state)
                let result = try write()
                state.seen = sink.lastWritten
                afterAppend()
                return result
            } catch {
                state.seen = nil
                throw refused(error, event ?? AuditEvent(kind: .evaluate, decision: .deny))
            }
        }
    }

    /// The writer checks only the trail's end against its head; a record edited further back
    /// would go unnoticed. So the whole trail is verified (against its head and the store's
    /// anchor) before the first record of this run, and again whenever the file is not as this
    /// trail left it (another inode, length or change time: someone else wrote, replaced or
    /// removed it). How this trail left it is the sink's `fstat` under its `flock` right after
    /// its write (``JSONLinesAuditSink/lastWritten``), never a look at the path afterwards: a
    /// record another writer (root's `keygate --embedded` on the state directory) appended in
    /// between is not taken for this trail's own. A broken chain is refused; a crash's
    /// leftovers (a head behind, a partial last record) are not broken, and the writer
    /// recovers them. A trail found broken is not read again until the file changes.
    private func checkUnchanged(_ state: inout WriterState) throws(KeygateError) {
        let now = AuditTrailFileState(path: path)
        if let seen = state.seen, now == seen { return }
        if let broken = state.broken, broken.file == now { throw broken.error }
        state.broken = nil
        // No trail, and none written this run: the writer starts one (or refuses, when the
        // store's anchor says there was one).
        if now == nil, state.seen == nil { return }
        if case .broken(let sequence, let reason) = try AuditTrailFile.verify(at: path, anchors: anchors) {
            let error = KeygateError(
                .io,
                "\(path) is broken at sequence \(sequence): \(reason); nothing more is recorded (or decided) "
                    + "until an administrator has looked at it")
            state.broken = (now, error)
            throw error
        }
        state.seen = now
    }

    /// Logs why a record was not written (paths and statuses, never an item or a value) and
    /// gives the error the client sees: `errSecIO`, without a path.
    private func refused(_ error: KeygateError, _ event: AuditEvent) -> KeygateError {
        let pid = event.caller.map { " pid \($0.processID)" } ?? ""
        Log.line("uid \(uid)\(pid): audit record not written, the \(event.kind.rawValue) is denied: \(error.message)")
        return KeygateError(.io, "the daemon's audit trail for uid \(uid) refuses records: \(scrubbed(error.message))")
    }

    /// `text` with every path of this trail replaced by what it is.
    func scrubbed(_ text: String) -> String {
        text.replacing(sink.headPath, with: "the trail's head").replacing(path, with: "the trail")
            .replacing(directory + "/items.db", with: "the store").replacing(directory, with: "the state directory")
    }

    // MARK: - Reading

    /// The newest `limit` records (0: all), oldest first, each the line as written. A partial
    /// last line (a crash during a write) is not a record and is left out.
    /// - Throws: `errSecAllocate` when they do not fit in one reply frame (ask for fewer);
    ///   `errSecIO` when the trail cannot be read.
    func show(limit: UInt32) throws(KeygateError) -> [String] {
        guard let snapshot = try snapshot(anchored: false) else { return [] }
        // The reply: frame header, list count, then a count and the bytes of each line.
        let budget = maximumFrameLength - 16
        var used = 0
        var lines: [[UInt8]] = []
        var tooLarge = false
        do throws(KeygateError) {
            try snapshot.linesNewestFirst(longestLine: FrameLimits.hardMaximumLength) { line in
                used += line.count + 4
                guard used <= budget else {
                    tooLarge = true
                    return false
                }
                lines.append(line)
                return limit == 0 || lines.count < Int(limit)
            }
        } catch {
            throw KeygateError(error.status, scrubbed(error.message))
        }
        guard !tooLarge else {
            throw KeygateError(
                .allocate,
                "the newest \(limit == 0 ? "records" : "\(limit) records") do not fit in one reply of "
                    + "\(maximumFrameLength) bytes; ask for fewer (the newest \(lines.count) fit)")
        }
        return lines.reversed().map { line in
            // A record's line is JSON without control characters; a damaged one may hold a NUL,
            // which the wire does not carry.
            String(decoding: line.map { $0 == 0 ? 0x3F : $0 }, as: UTF8.self)
        }
    }

    /// Checks the trail's chain, its head and the anchor kept in the store, reading it a chunk
    /// at a time.
    /// - Returns: the records checked (those before the break, when broken) and the problem,
    ///   nil when nothing is wrong. A head left behind, records held in the store or a partial
    ///   last record after a crash is not a problem: the next record for this uid recovers it.
    /// - Throws: `errSecIO` (without a path) when the trail or its head cannot be read.
    func verify() throws(KeygateError) -> (records: UInt64, problem: String?) {
        // Without holding the lock while reading: a snapshot taken under it (no record
        // half-written), then its bytes. No trail (a fresh uid, or one deleted behind the
        // daemon's back: the anchor's to say) or a break found so (a crash recovery may have
        // cut the trail since) is checked again with the writer held off, by the same verifier.
        do throws(KeygateError) {
            var verdict = try snapshot(anchored: true)?.verify()
            if verdict.map({ if case .broken = $0 { true } else { false } }) ?? true {
                verdict = try lock.withLock { _ throws(KeygateError) -> AuditVerification in
                    try AuditTrailFile.verify(at: path, anchors: anchors)
                }
            }
            switch verdict ?? .intact(records: 0) {
            case .intact(let records), .headBehind(let records, _), .tornTail(let records, _, _),
                .heldInStore(let records, _):
                return (UInt64(records), nil)
            case .broken(let sequence, let reason):
                Log.line("uid \(uid): audit trail \(path) is broken at sequence \(sequence): \(reason)")
                return (sequence - 1, scrubbed("broken at sequence \(sequence): \(reason)"))
            }
        } catch {
            Log.line("uid \(uid): audit trail cannot be verified: \(error.message)")
            throw KeygateError(error.status, scrubbed(error.message))
        }
    }

    /// The trail as it stands, taken under the lock (no record half-written), with the store's
    /// anchor and held records when `anchored`; nil when there is no trail yet.
    private func snapshot(anchored: Bool) throws(KeygateError) -> AuditTrailSnapshot? {
        do throws(KeygateError) {
            return try lock.withLock { _ throws(KeygateError) -> AuditTrailSnapshot? in
                try AuditTrailSnapshot.take(at: path, anchors: anchored ? anchors : nil)
            }
        } catch {
            throw KeygateError(error.status, scrubbed(error.message))
        }
    }

    /// What the writer knows of the trail file, under the lock.
    private struct WriterState {
        /// The file as this trail last left it (nil before the first record of this run, and
        /// after a failure).
        var seen: AuditTrailFileState?
        /// The file as it was when found broken, and why (so it is not read again unchanged).
        var broken: (file: AuditTrailFileState?, error: KeygateError)?
    }
}
