import Dispatch
import Glibc
public import KeygateItems
public import KeygatePolicy
import Synchronization

/// Appends audit records to a JSON Lines file, one record a line, with the chain's head kept
/// beside it in `<path>.head` (so records cut off the end are detected).
///
/// The file is created 0600 and only ever appended to. Several processes may share it: each
/// append takes an exclusive `flock`. The sink keeps the trail open and its head in memory;
/// under the lock one `lstat` of each file tells whether the trail and head are still the files
/// it last wrote and the trail still ends where it left it (under group commit the paths are
/// looked up and checked on the first append after each flush, and between flushes the sink
/// keeps the lock, released at each flush, by ``flush()``, or once the sink has been idle for a
/// millisecond (1 to 2 ms after its last append: one thread looks once per idle period), so
/// an append between flushes is one `write` system call and another writer waits at most about
/// 2 ms; after the lock was given up, an `lseek` of the open trail gives its length: a
/// trail replaced, removed or made public behind the sink's back is noticed within N records,
/// the ones before that going to the file it had open). Only when another process appended meanwhile (or on first
/// use) are the head file and the last line read again, and checked: records past the head
/// that chain correctly from it (a crash or a failed head write between a record and its
/// head) are taken over, with a ``AuditEvent/Kind/recover`` record first
/// (``repair(at:restartingAnchor:)`` does the same on demand). A file that does not chain
/// from its head is refused (`errSecIO`), so a tampered trail stops auditing instead of being
/// extended; so is one that no longer reaches the anchor kept in the store
/// (``AuditAnchorKeeper``), when one is given.
///
/// The anchor follows the durable trail at a cadence, not every record: it is saved (one store
/// transaction) when the store holds none, or when a flush leaves the trail ``anchorInterval``
/// or more records past it, and otherwise offered to the store for its next item write. Once
/// an anchor exists, a trail deleted or restarted with its head is always refused; one cut
/// back with a consistent head is refused when the cut goes below the anchor, so the records
/// past it (fewer than ``anchorInterval`` since the last save) are guarded by the head alone.
///
/// Each append writes its lines with one `write`, then (as the durability says) one `fdatasync`
/// of the trail (its data and length, not its times), then the new head in place (one `pwrite`
/// of a fixed-width line): after every append under ``Durability/eachRecord``, at each flush
/// under group commit. Between group-commit flushes the head stays in memory; a group-commit
/// writer that finds the trail longer than it left it reads back from the end as far as the
/// head's record and takes the tip from the records after it when they chain from it, without
/// a ``AuditEvent/Kind/recover`` record (anything else is checked and recovered as above).
///
/// Durability is a trade-off:
/// - ``Durability/eachRecord`` (the default): an acknowledged record survives `kill -9` and
///   power loss. Outside a facade call the trail is `fdatasync`ed before the append returns.
///   Inside one (``Auditor/collecting(_:)``), with an anchor kept in an item store, the
///   records are written and *held* instead: offered to the call's item write (``AuditCall``),
///   which commits them (and the new head as the anchor) with the item, so one commit makes
///   both durable; before the call returns it
///   settles (``settle()``), `fdatasync`ing whatever no transaction committed (a read, a refusal,
///   a failed write). Each flush tells the store to release what it holds that far, and at
///   ``heldLimit`` held records an append flushes instead. After a power loss the first load
///   (an append, or ``repair(at:restartingAnchor:)``) writes the records the store holds
///   past the trail's last whole record back, when they chain from it, with a
///   ``AuditEvent/Kind/recover`` record (``AuditNote/restoredFromStore(records:)``); held
///   records that do not chain are refused (`errSecIO`). The head is not flushed (and, for
///   held records, written only once they are durable): after a power loss it may be behind
///   the trail, and the next append (or `keygate audit repair`) brings it forward with a
///   ``AuditEvent/Kind/recover`` record; nothing is lost.
/// - ``Durability/groupCommit(records:)`` flushes once every N records, on a background queue
///   (the append that makes N does not wait for the disk; at most one flush is in flight, so
///   an append waits only when the previous flush has not finished), and when the sink is
///   released with records pending: much faster for many decisions in one process, and a
///   crash of the process alone loses nothing (the bytes are in the page cache; the head
///   file, left at the last flush, is carried forward by the next writer), but a power
///   loss can lose the records not yet flushed (at most 2N−1), and can leave the head out of
///   step with the trail, which then stops further auditing until `keygate audit verify` has
///   been looked at. A background flush that fails makes the next append flush synchronously,
///   and fail (`errSecIO`) while flushing still fails.
///
/// Tamper evidence, not tamper proof: the chain shows a record deleted, edited or reordered
/// by someone who did not also rewrite everything after it and the head. Whoever can rewrite
/// both files can forge a consistent trail; ship the trail off the host (with redaction) when
/// that matters.
public final class JSONLinesAuditSink: AuditSink {
    /// How often records reach the disk.
    public enum Durability: Hashable, Sendable {
        /// `fdatasync` after every record.
        case eachRecord
        /// `fdatasync` once every N records, and when the sink is released.
        case groupCommit(records: Int)
    }

    /// The trail file.
    public let path: String
    /// The head file.
    public var headPath: String { path + ".head" }
    /// The durability in force.
    public let durability: Durability
    /// Whether the trail, its head and their directory must be the effective user's own and
    /// private (``KeygateItems/FilePrivacy``).
    public let privacy: FilePrivacy
    /// Where the trail's anchor and held records are kept (in the item store), when anywhere.
    public let keeper: AuditAnchorKeeper?
    /// How many records the anchor may lag the durable trail before a flush saves it in a
    /// transaction of its own (``defaultAnchorInterval`` unless told).
    public let anchorInterval: Int
    /// The anchor interval of a sink not told otherwise: 64 records.
    public static let defaultAnchorInterval = 64

    /// The open trail and what this sink knows of it.
    struct State {
        /// The trail, open for appending; -1 before first use.
        var trail: Int32 = -1
        /// The head file, open for writing in place; -1 when not open.
        var headFile: Int32 = -1
        /// The trail's and the head's files, as opened (device, inode).
        var trailFile: FileID?
        var headFileID: FileID?
        /// Where the chain stands, valid while the trail is `size` bytes long. Its hash is made
        /// from ``tip`` (and ``tip`` cleared) when the last append between flushes left the tip
        /// there; setting it clears ``tip``.
        var head: AuditHead {
            mutating get {
                materializeTip()
                return storedHead
            }
            set {
                storedHead = newValue
                tip = nil
            }
        }
        /// ``head``, its hash stale while ``tip`` is set.
        private var storedHead = AuditHead(genesis: "")
        /// The hash of the record at ``head``'s sequence as bytes, when an append between
        /// flushes put it there and no hex `String` was made of it yet.
        private(set) var tip: SHA256Digest?
        /// ``head``'s sequence (the tip's hash not made into text).
        var headSequence: UInt64 { storedHead.sequence }

        /// Moves the head to `sequence`, whose record's hash is `digest` (text made only when
        /// ``head`` is next read).
        mutating func advanceHead(to sequence: UInt64, hash digest: SHA256Digest) {
            storedHead.sequence = sequence
            tip = digest
        }

        /// Makes ``tip`` into ``head``'s hash.
        private mutating func materializeTip() {
            guard let tip else { return }
            storedHead.hash = tip.hex
            self.tip = nil
        }
        /// The trail's length after this sink's last write; -1 when unknown (read it again).
        var size: off_t = -1
        /// Records written and not yet flushed.
        var pending = 0
        /// Whether `head` is past the head file (group commit between flushes: the head file is
        /// written at each flush, not each record).
        var headUnwritten = false
        /// The trail as this sink's last append left it (``lastWritten``).
        var written: AuditTrailFileState?
        /// The anchor the store holds, as last read (with the trail) or saved by this sink; nil
        /// when it holds none.
        var anchor: AuditHead?
        /// Whether this sink holds the trail's `flock` between appends (group commit, between
        /// flushes: released at the next flush, or once the sink has been idle for
        /// ``JSONLinesAuditSink/idleRelease``).
        var locked = false
        /// Whether an idle release is scheduled.
        var releaseScheduled = false
        /// How many of this trail's records the store holds and has not been told to release:
        /// as found on load, plus those held since (a flush then offers the store a release).
        var held = 0
        /// The last record known durable in the trail (flushed by this sink, or the store's
        /// release as last read): records are held no more than ``JSONLinesAuditSink/heldLimit`` past it.
        var durable: UInt64 = 0
        /// The release last read from the store or offered to it.
        var releaseOffered: UInt64 = 0
        /// Whether an early flush of held records is in flight (``JSONLinesAuditSink/heldLimit``).
        var heldFlushing = false
        /// How many early flushes of held records this sink has started (tests).
        var earlyFlushes = 0
        /// Whether a facade call's records were held since the last ``JSONLinesAuditSink/settle()``.
        var unsettled = false
        /// The buffer a group-commit append between flushes renders its line into, kept (with
        /// its capacity) for the next (``JSONLinesAuditSink/store(_:at:)``).
        var line: [UInt8] = []
        /// The pieces of its lines such an append renders once and copies after
        /// (``AuditLinePieces``: the process's fields, the status, the evaluator's reasons).
        var linePieces = AuditLinePieces()

        mutating func close() {
            if trail >= 0 { Glibc.close(trail) }
            if headFile >= 0 { Glibc.close(headFile) }
            self = State()
        }
    }

    /// Which file a path named when it was opened.
    struct FileID: Equatable {
        var device: dev_t
        var inode: ino_t

        init(_ info: stat) {
            device = info.st_dev
            inode = info.st_ino
        }
    }

    /// The state, in a box the idle releases share (they never hold the sink itself).
    final class Shared: Sendable {
        let state = Mutex(State())
        /// What the sink offers the store (``AuditOffer``): taken by a call's item write
        /// (``AuditCall/willCommit(into:)``) under the store's own lock, so never held while
        /// another lock is taken (the state's lock may be held while it is).
        let offer = Mutex(AuditOffer())
        /// Appends that kept the lock so far, counted under the state's lock: the idle release
        /// reads it without that lock, so a busy sink's release looks again later without
        /// waiting on (or spinning for) the lock an append holds.
        let appends = Atomic<UInt64>(0)
        /// How long the lock is kept after the last append when no flush comes first.
        let idleRelease: DispatchTimeInterval
        /// Where the idle release is scheduled.
        let releaser: IdleReleaser

        init(idleRelease: DispatchTimeInterval, releaser: IdleReleaser) {
            self.idleRelease = idleRelease
            self.releaser = releaser
        }
    }

    let shared: Shared
    /// Where group commit's flushes run, one at a time (nil under ``Durability/eachRecord``).
    private let flusher: DispatchQueue?
    /// Why the last background flush failed, until a synchronous one succeeds.
    let flushFailure = FlushFailure()

    /// Shared with the background flushes (which never hold the sink itself, so releasing the
    /// sink never waits on its own queue).
    final class FlushFailure: Sendable {
        let reason = Mutex<String?>(nil)
        /// Whether ``reason`` is set, changed with it under its lock: what an append between
        /// flushes reads (no lock taken per append).
        private let failed = Atomic<Bool>(false)

        /// Whether a flush failed and no synchronous one succeeded since.
        var hasFailed: Bool { failed.load(ordering: .acquiring) }

        /// Sets (or, with nil, clears) why the last flush failed.
        func set(_ text: String?) {
            reason.withLock { reason in
                reason = text
                failed.store(text != nil, ordering: .releasing)
            }
        }
    }

    /// A sink appending to `path` (created 0600 on first use).
    ///
    /// With ``KeygateItems/FilePrivacy/ownerOnly`` (the default), a trail or head that belongs to another
    /// user or that others can read or write, or a directory others can write, is refused
    /// (`errSecIO`, naming the path and the fix): someone else could forge records in it. A
    /// FIFO or device in place of either file is refused, never waited on.
    ///
    /// With `anchors` (the item store the trail audits, such as `SQLiteItemStore`), the trail's
    /// head is also kept in its named rows (its anchor, ``AuditAnchorKeeper``), and a trail that no longer reaches it (deleted with
    /// its head, restarted, cut back below it) is refused (`errSecIO`) instead of being started
    /// afresh. The anchor is saved in a transaction of its own only when it is worth one: after
    /// the flush that makes the first durable record when the store holds no anchor for the
    /// trail, and after a flush that leaves the durable trail `anchorInterval` or more records
    /// past the saved anchor. Every durable head is also offered to the next item write a
    /// facade call of this trail makes (``AuditCall``), which writes it at no extra cost. So a read costs no store transaction, and the anchor lags the durable
    /// trail by fewer than `anchorInterval` records unless they were written without an item
    /// write since (a cut-back with a consistent head is caught once it goes below the anchor).
    public convenience init(
        path: String, durability: Durability = .eachRecord, anchors: (any MetadataStore)? = nil,
        privacy: FilePrivacy = .ownerOnly, anchorInterval: Int = JSONLinesAuditSink.defaultAnchorInterval
    ) {
        self.init(
            path: path, durability: durability, anchors: anchors, privacy: privacy, anchorInterval: anchorInterval,
            idleRelease: Self.idleRelease)
    }

    /// A sink as above that keeps the trail's lock for `idleRelease` after its last append
    /// under group commit (tests prove the lock is kept with a long one), released by
    /// `releaser` (tests may give one of their own).
    init(
        path: String, durability: Durability, anchors: (any MetadataStore)?, privacy: FilePrivacy,
        anchorInterval: Int, idleRelease: DispatchTimeInterval, releaser: IdleReleaser = .shared
    ) {
        shared = Shared(idleRelease: idleRelease, releaser: releaser)
        self.path = path
        self.durability = durability
        self.keeper = anchors.map { AuditAnchorKeeper(store: $0, trail: path) }
        self.anchorInterval = max(anchorInterval, 1)
        self.privacy = privacy
        flusher = Self.flusher(for: durability)
    }

    /// The queue group commit's flushes run on; nil under ``Durability/eachRecord``.
    private static func flusher(for durability: Durability) -> DispatchQueue? {
        guard case .groupCommit = durability else { return nil }
        return DispatchQueue(label: "keygate.audit.flush")
    }

    deinit {
        flush()
        shared.state.withLock { $0.close() }
    }

    /// Forces every record written so far to the disk (nothing to do when none is pending).
    /// Under group commit the head file is then brought up to the chain's tip too, unless
    /// another writer has appended since this sink last did (the tip is then that writer's to write).
    public func flush() {
        flusher?.sync {}
        shared.state.withLock { state in
            guard state.trail >= 0 else { return }
            defer { Self.unlock(&state) }
            if state.pending > 0 {
                guard Self.sync(state.trail, path: path) else { return }
                state.pending = 0
            }
            guard state.headUnwritten, flock(state.trail, LOCK_EX) == 0 else { return }
            state.locked = true
            guard lseek(state.trail, 0, SEEK_END) == state.size else { return }
            do throws(KeygateError) {
                try writeHead(state.head, state: &state)
                state.headUnwritten = false
            } catch {
                // Left behind: the next writer takes the tip from the trail, as after a crash.
            }
        }
    }

    /// The trail file as this sink's last append left it, taken with `fstat` of the open trail
    /// under the `flock`, right after the write (so another writer's record can never be taken
    /// for this sink's own); nil before the first append, after one that failed, and under
    /// group commit (which looks at the trail's times only after each flush, see above).
    public var lastWritten: AuditTrailFileState? { shared.state.withLock { $0.written } }

    /// Seals and appends the record. When earlier records were written past the head (a crash
    /// or a failed head write), the head is first brought forward over them and a ``AuditEvent/Kind/recover``
    /// record says so.
    @discardableResult
    public func append(_ event: AuditEvent, at time: Timestamp) throws(KeygateError) -> AuditRecord {
        guard let record = try write([event], at: time, in: nil).records.last else {
            throw KeygateError(.internalError, "the audit record was not written")
        }
        return record
    }

    /// Seals and appends the records together: one `write`, and (as the durability says) one
    /// `fdatasync`, head and anchor for all of them. All are written or none is.
    @discardableResult
    public func append(contentsOf events: [AuditEvent], at time: Timestamp) throws(KeygateError) -> [AuditRecord] {
        guard !events.isEmpty else { return [] }
        let records = try write(events, at: time, in: nil).records
        guard records.count == events.count else {
            throw KeygateError(.internalError, "the audit records were not written")
        }
        return records
    }

    /// Brings the head forward over records written past it (a crash or a failed head write),
    /// and records that as a ``AuditEvent/Kind/recover`` record, as the next append would.
    /// - Returns: what was done, or nil when the head was where the trail ends.
    /// - Throws: `errSecIO` when the trail does not chain from its head (tampering is never
    ///   repaired) or cannot be written.
    ///
    /// With `restartingAnchor`, a trail that no longer reaches the anchor kept in the store (it
    /// was deleted with its head, or restarted) is accepted as it is, provided its own chain is
    /// intact: a ``AuditEvent/Kind/recover`` record names the anchor it replaces, and the anchor
    /// moves to the trail. Only ever done when asked (`keygate audit repair --restart`).
    @discardableResult
    public func repair(at time: Timestamp, restartingAnchor: Bool = false) throws(KeygateError) -> AuditRepair? {
        try write([], at: time, in: nil, restartingAnchor: restartingAnchor, reread: true).repair
    }

    /// Appends `events` under the locks, after a recovery record when one is due.
    /// - Returns: the records of `events`, and the repair when one was made.
    func write(
        _ events: [AuditEvent], at time: Timestamp, in call: AuditCall?, restartingAnchor: Bool = false,
        reread: Bool = false
    ) throws(KeygateError) -> (records: [AuditRecord], repair: AuditRepair?) {
        if let call, keeper != nil { call.touch(self) }
        return try shared.state.withLock { (state: inout State) throws(KeygateError) -> ([AuditRecord], AuditRepair?) in
            do throws(KeygateError) {
                return try write(
                    events, at: time, in: call, restartingAnchor: restartingAnchor, reread: reread, state: &state)
            } catch {
                // Whatever failed, read the trail again next time rather than trust what is held.
                state.size = -1
                state.written = nil
                throw error
            }
        }
    }

    func write(
        _ events: [AuditEvent], at time: Timestamp, in call: AuditCall?, restartingAnchor: Bool, reread: Bool,
        state: inout State
    ) throws(KeygateError) -> ([AuditRecord], AuditRepair?) {
        let size = try lockedTrail(&state)
        // Kept only by a group-commit append that does not flush (set last, on success).
        var keepsLock = false
        defer {
            if keepsLock {
                scheduleRelease(&state)
            } else {
                Self.unlock(&state)
            }
        }
        var loaded: Loaded?
        if reread || size != state.size {
            loaded = try load(&state, size: size, restartingAnchor: restartingAnchor)
        }
        var head = state.head
        var records: [AuditRecord] = []
        var repair: AuditRepair?
        if let recovery = loaded?.recovery {
            let record = head.seal(
                Self.recoveryEvent(
                    from: recovery.staleHead, to: head.sequence, tornBytes: recovery.tornBytes + recovery.restoredTorn,
                    restored: recovery.restored),
                at: time)
            records.append(record)
            repair = AuditRepair(
                staleHead: recovery.staleHead, recovered: recovery.records, record: record.sequence,
                tornBytes: recovery.tornBytes + recovery.restoredTorn, restored: recovery.restored)
        }
        if let replacedAnchor = loaded?.replacedAnchor {
            let before = head.sequence
            let event = AuditEvent(
                kind: .recover, decision: .restarted,
                notes: [.anchorRestarted(replacedAnchor)], processID: ProcessIdentity.processID,
                userID: ProcessIdentity.userID)
            let record = head.seal(event, at: time)
            records.append(record)
            repair = AuditRepair(
                staleHead: repair?.staleHead ?? before, recovered: repair?.recovered ?? 0, record: record.sequence,
                tornBytes: repair?.tornBytes ?? 0, anchorRestarted: true, restored: repair?.restored ?? 0)
        }
        let sealedFrom = records.count
        for event in events { records.append(head.seal(event, at: time)) }
        guard !records.isEmpty else {
            if state.headUnwritten {
                try writeHead(head, state: &state)
                state.headUnwritten = false
            }
            if keeper != nil, loaded?.anchor != head {
                guard Self.sync(state.trail, path: path) else { throw failure("cannot flush \(path)") }
                try saveAnchor(head)
                state.anchor = head
            }
            return ([], nil)
        }
        let written = try append(records, to: state.trail, size: state.size)
        state.size += off_t(written)
        state.pending += records.count
        if let call = holdingCall(call, through: head.sequence, recovered: loaded?.recovery != nil, state: state) {
            // In a facade call: held in the store's next item transaction instead of flushed here.
            hold(records, head: head, in: call, state: &state)
            return (sealedFrom == 0 ? records : Array(records[sealedFrom...]), repair)
        }
        let failedBefore = flushFailure.reason.withLock { $0 }
        var sync: Bool
        var background = false
        switch durability {
        case .eachRecord: sync = true
        case .groupCommit(let count):
            sync = state.pending >= max(count, 1) || failedBefore != nil
            background = sync && failedBefore == nil
        }
        if sync && background, let flusher {
            // The flush runs off this call; the anchor is saved (when due) or offered after it, there.
            sync = false
            let saveAnchor = anchorDue(head, state: state)
            if saveAnchor { state.anchor = head }
            flushInBackground(flusher, head: head, saveAnchor: saveAnchor, state: &state)
        }
        if sync {
            guard Self.sync(state.trail, path: path) else {
                throw failure("cannot flush \(path)" + (failedBefore.map { " (an earlier flush: \($0))" } ?? ""))
            }
            state.pending = 0
            releaseHeld(through: head.sequence, state: &state)
        }
        if case .groupCommit = durability, !sync, !background {
            // Between flushes the head stays in memory: the next flush writes it, and another
            // writer meanwhile takes the tip from the trail's end (``tipPastHead``). The lock is
            // kept until then (or until the sink is idle): no other writer can append meanwhile,
            // so the next append needs no system call but its write.
            state.headUnwritten = true
            keepsLock = true
        } else {
            try writeHead(head, state: &state)
            state.headUnwritten = false
        }
        state.head = head
        // The anchor follows only what is durable, so it may lag the trail but never leads it:
        // saved when due (or after a failed background flush, whose save may not have run),
        // otherwise offered for the store's next item write.
        if sync, keeper != nil {
            if failedBefore != nil || anchorDue(head, state: state) {
                try saveAnchor(head)
                state.anchor = head
            } else {
                offerAnchor(head)
            }
        }
        if sync, failedBefore != nil { flushFailure.set(nil) }
        if durability == .eachRecord { state.written = AuditTrailFileState(descriptor: state.trail) }
        if keepsLock { shared.appends.add(1, ordering: .relaxed) }
        return (sealedFrom == 0 ? records : Array(records[sealedFrom...]), repair)
    }

    /// Starts flushing the trail (as far as `head`) on `flusher`, after waiting for the flush
    /// before it: at most one is in flight. Once the flush succeeded the anchor is saved when
    /// `saveAnchor` (else offered for the store's next item write); a failure is kept for the
    /// next append, which then flushes synchronously and saves the anchor.
    func flushInBackground(
        _ flusher: DispatchQueue, head: AuditHead, saveAnchor: Bool, state: inout State
    ) {
        flusher.sync {}
        let descriptor = fcntl(state.trail, F_DUPFD_CLOEXEC, 0)
        guard descriptor >= 0 else {
            flushFailure.set("cannot duplicate the trail's descriptor")
            return
        }
        state.pending = 0
        let keeper = keeper
        let shared = shared
        let path = path
        let failure = flushFailure
        flusher.async {
            defer { close(descriptor) }
            guard Self.sync(descriptor, path: path) else {
                let reason = String(cString: strerror(errno))
                failure.set(reason)
                return
            }
            guard saveAnchor else {
                if keeper != nil { shared.offer.withLock { $0.anchor = head } }
                return
            }
            do throws(KeygateError) {
                try Self.saveAnchor(head, keeper: keeper, shared: shared)
            } catch {
                failure.set("cannot save the anchor: \(error.message)")
            }
        }
    }

    /// Makes the trail open at `descriptor` durable (false on failure, or a test fault):
    /// `fdatasync`, which writes the data and the metadata needed to read it back (the
    /// length an append changed), not the times, which no reader of the trail depends on.
    static func sync(_ descriptor: Int32, path: String) -> Bool {
        if failingFlushes.withLock({ !$0.isEmpty && $0.contains(path) }) {
            errno = EIO
            return false
        }
        return fdatasync(descriptor) == 0
    }

    /// Trails whose flushes fail (`EIO`), to prove what a failed group-commit flush leaves.
    /// Tests only: a fault can only make auditing, and so the decision, fail.
    static let failingFlushes = Mutex<Set<String>>([])
}
