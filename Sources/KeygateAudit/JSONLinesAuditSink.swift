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
    /// private (``FilePrivacy``).
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
    /// With ``FilePrivacy/ownerOnly`` (the default), a trail or head that belongs to another
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
    private func flushInBackground(
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

    /// How long a group-commit sink keeps the trail's lock after its last append when no flush
    /// comes first: 1 ms (tests may set another).
    static let idleRelease = DispatchTimeInterval.milliseconds(1)

    /// Releases the trail's lock when this sink holds it.
    static func unlock(_ state: inout State) {
        if state.locked, state.trail >= 0 { flock(state.trail, LOCK_UN) }
        state.locked = false
    }

    /// Makes sure the lock kept between appends is released once the sink has been idle for
    /// its idle release (``idleRelease`` unless a test set another), by its ``IdleReleaser``'s
    /// thread, never the flusher, which an append may wait for while it holds the state.
    ///
    /// One release is scheduled at a time, not one per append: when it comes due and appends
    /// were made since it was scheduled (``Shared/appends``, read without the state's lock), it
    /// is due again one idle period later, and the lock is taken only when none was.
    func scheduleRelease(_ state: inout State) {
        guard !state.releaseScheduled else { return }
        state.releaseScheduled = true
        shared.releaser.schedule(shared, appends: shared.appends.load(ordering: .relaxed))
    }

    /// Gives the trail's lock up unless an append came since the releaser saw `seen` appends.
    /// - Returns: whether the release is done (false: the sink is busy, look again later).
    static func releaseIfIdle(_ shared: Shared, seen: UInt64) -> Bool {
        shared.state.withLock { state in
            if state.locked, shared.appends.load(ordering: .relaxed) != seen { return false }
            unlock(&state)
            state.releaseScheduled = false
            return true
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

    /// Opens the trail when needed and locks it (`flock`), reopening it when the path now
    /// names another file (removed, replaced).
    /// - Returns: the trail's length, as found under the lock.
    private func lockedTrail(_ state: inout State) throws(KeygateError) -> off_t {
        for _ in 0..<3 {
            if state.trail < 0 {
                try PrivateFile.checkDirectory(of: path, privacy: privacy, status: .io)
                guard
                    let descriptor = try PrivateFile.open(
                        path, flags: O_RDWR | O_APPEND | O_CREAT, privacy: privacy, status: .io)
                else { throw failure("cannot open \(path)") }
                var info = stat()
                fstat(descriptor, &info)
                state.trail = descriptor
                state.trailFile = FileID(info)
                state.size = -1
            }
            if state.locked, state.size >= 0, state.headFile >= 0 {
                // Locked since this sink's last append left the trail `size` bytes long.
                return state.size
            }
            guard flock(state.trail, LOCK_EX) == 0 else { throw failure("cannot lock \(path)") }
            state.locked = true
            if case .groupCommit = durability, state.pending > 0, state.size >= 0, state.headFile >= 0 {
                // Group commit, between flushes: only the trail's length (did another process
                // append?), from the open file by `lseek`; the paths, owners and modes are checked
                // in full on the first append after each flush. Not `fstat`: a file whose times
                // were looked at gets a fine-grained time stamp on its next write (the kernel's
                // multigrain time stamps), which makes every append rewrite the inode.
                let end = lseek(state.trail, 0, SEEK_END)
                if end >= 0 { return end }
            }
            // One lstat of each file: the same files, still private, and the trail's length.
            var info = stat()
            if lstat(path, &info) == 0, FileID(info) == state.trailFile {
                do throws(KeygateError) {
                    try PrivateFile.check(info, path: path, privacy: privacy, status: .io)
                    if state.headFile >= 0 {
                        var headInfo = stat()
                        if lstat(headPath, &headInfo) != 0 || FileID(headInfo) != state.headFileID {
                            state.size = -1  // replaced or removed: read it again
                        } else {
                            try PrivateFile.check(headInfo, path: headPath, privacy: privacy, status: .io)
                        }
                    }
                } catch {
                    Self.unlock(&state)
                    throw error
                }
                return info.st_size
            }
            Self.unlock(&state)
            state.close()
        }
        throw KeygateError(.io, "\(path) keeps being replaced; run 'keygate audit verify'")
    }

    /// What reading the trail again found.
    private struct Loaded {
        var recovery: Recovery?
        var anchor: AuditHead?
        var replacedAnchor: String?
    }

    /// What a recovery takes over: records past the stale head, and a torn partial line.
    struct Recovery {
        var staleHead: UInt64
        var records: UInt64
        var tornBytes: Int
        /// Records written back from the store's held records, and a partial line cut before them.
        var restored: UInt64 = 0
        var restoredTorn = 0
    }

    /// Reads the head and the trail's end again (first use, or another process appended),
    /// checks them against each other and the anchor, and cuts off a partial last line.
    ///
    /// A new trail's head is written before its first record, so a crash never leaves records
    /// without one. Records past the head (a crash or a failed head write) that chain
    /// correctly from it are taken over; a partial last line past the head (a crash during a
    /// write) is cut off.
    /// - Throws: `errSecIO` when the trail does not chain from its head (tampering), or does
    ///   not reach the anchor (unless `restartingAnchor`).
    private func load(_ state: inout State, size found: off_t, restartingAnchor: Bool) throws(KeygateError) -> Loaded {
        var size = found
        if state.headFile >= 0 {
            close(state.headFile)
            state.headFile = -1
            state.headFileID = nil
        }
        let existing = try PrivateFile.open(headPath, flags: O_RDWR, privacy: privacy, status: .io)
        var head: AuditHead
        var recovery: Recovery?
        var isNew = false
        let contents = try existing.map { (file: Int32) throws(KeygateError) -> AuditHeadFile.Contents in
            state.headFile = file
            return try AuditHeadFile.read(descriptor: file, path: headPath)
        }
        let held = try heldOnLoad(&state)
        let lastHeld = held?.last
        switch contents ?? .missing {
        case .missing:
            // Held records of a trail whose head is gone belong to the old trail: the anchor
            // refuses it below, unless it is being restarted (they are then let go).
            if lastHeld != nil, restartingAnchor { releaseAllHeld(&state) }
            guard size == 0 else {
                throw KeygateError(.io, "\(headPath) is missing but \(path) has records; run 'keygate audit verify'")
            }
            head = AuditHead(genesis: AuditCrypto.random(32).hexString)
            isNew = true
        case .damaged(let problem):
            throw KeygateError(.io, "\(headPath) is damaged: \(problem)")
        case .found(let found):
            head = found
            // Records the store holds past the trail's end (a power loss took them from the
            // trail) go back first: only then is the trail checked against its head and anchor.
            // Looked for only when the store holds records past the head, or the trail does
            // not end at its head.
            var restored: Restored?
            var mayReachPast = false
            // Whether the trail ends at its head, once looked at (not again below).
            var endsAtHead: Bool?
            // Whether the trail ends at the last held record, past a head left behind.
            var heldTip = false
            if let last = lastHeld, last > head.sequence, size > 0,
                let tip = try tipPastHead(state.trail, size: size, head: head), tip.sequence == last
            {
                // The head file left behind by held records committed with their items (``settle()``):
                // the last of them stands for it, so the tip is taken over without a recover record
                // (the anchor check below holds it to that record's hash).
                state.headUnwritten = true
                head = tip
                heldTip = true
            } else if let last = lastHeld {
                mayReachPast = last > head.sequence || size == 0
                if !mayReachPast {
                    let ends = try self.endsAtHead(state.trail, size: size, head: head)
                    endsAtHead = ends
                    mayReachPast = !ends
                }
            }
            if mayReachPast {
                restored = try restore(
                    state: &state, size: size, genesis: head.genesis, restartingAnchor: restartingAnchor)
                if let restored {
                    size = restored.size
                    endsAtHead = nil
                }
            }
            if heldTip {
                // Ends at the held record standing for its head: nothing to take over.
            } else if size == 0 {
                guard head.sequence == 0 else {
                    throw KeygateError(
                        .io, "\(path) is empty but its head says \(head.sequence) records; run 'keygate audit verify'")
                }
            } else if case .groupCommit = durability, let tip = try tipPastHead(state.trail, size: size, head: head) {
                // A group-commit writer (this sink before an error, or another) has not written
                // the head since these records: expected, so taken over without a recover record.
                state.headUnwritten = tip != head
                head = tip
            } else {
                if endsAtHead == nil { endsAtHead = try self.endsAtHead(state.trail, size: size, head: head) }
                if endsAtHead == false { (head, recovery) = try recover(state.trail, head: head) }
            }
            if let restored {
                var done = recovery ?? Recovery(staleHead: found.sequence, records: 0, tornBytes: 0)
                done.restored = restored.records
                done.restoredTorn = restored.tornBytes
                recovery = done
            }
        }
        var loaded = Loaded(recovery: recovery)
        // Read with the held records when the store holds any (nothing this load did since is
        // committed: a restore writes the trail, a release is only offered).
        if let held { loaded.anchor = held.anchor } else { loaded.anchor = try keeper?.anchor() }
        state.anchor = loaded.anchor
        if let anchor = loaded.anchor, let problem = head.mismatch(with: anchor) {
            guard restartingAnchor else { throw KeygateError(.io, "\(path): \(problem); run 'keygate audit verify'") }
            loaded.replacedAnchor = problem
        }
        var length = size
        if let torn = recovery?.tornBytes, torn > 0 {
            guard size >= torn, ftruncate(state.trail, size - off_t(torn)) == 0 else {
                throw failure("cannot cut the partial record off \(path)")
            }
            length -= off_t(torn)
        }
        if state.headFile < 0 {
            guard
                let created = try PrivateFile.open(headPath, flags: O_RDWR | O_CREAT, privacy: privacy, status: .io)
            else { throw failure("cannot create \(headPath)") }
            state.headFile = created
        }
        var headInfo = stat()
        fstat(state.headFile, &headInfo)
        state.headFileID = FileID(headInfo)
        if isNew {
            try writeHead(head, state: &state)
            guard fdatasync(state.headFile) == 0 else { throw failure("cannot flush \(headPath)") }
            PrivateFile.syncDirectory(of: path)
        }
        state.head = head
        state.size = length
        return loaded
    }

    /// Whether the trail's last line is complete and is the record the head names.
    private func endsAtHead(_ trail: Int32, size: off_t, head: AuditHead) throws(KeygateError) -> Bool {
        guard let last = try Self.lastLine(of: trail, size: size, path: path) else { return false }
        return last.terminated && AuditCrypto.sha256Hex(last.line) == head.hash
    }

    /// The chain's tip when the trail ends in whole records that chain from `head` (the head
    /// itself when its record ends the trail), read back from the end only as far as the
    /// head's record, and no further than ``tipReach`` bytes; nil when the head's record is not
    /// within reach, a record after it does not chain, or the trail ends in a partial line
    /// (then the whole trail is checked, as after a crash).
    private func tipPastHead(_ trail: Int32, size: off_t, head: AuditHead) throws(KeygateError) -> AuditHead? {
        var reach: off_t = 16 << 10
        while true {
            let start = max(size - reach, 0)
            var bytes = [UInt8](repeating: 0, count: Int(size - start))
            var got = 0
            repeat {
                got = bytes.withUnsafeMutableBytes { pread(trail, $0.baseAddress, $0.count, start) }
            } while got < 0 && errno == EINTR
            guard got == bytes.count else { throw failure("cannot read \(path)") }
            guard bytes.last == 10 else { return nil }
            var lines = bytes.dropLast().split(separator: 10, omittingEmptySubsequences: false)
            if start > 0 { lines.removeFirst() }  // may begin mid-line
            var first: Int?
            if head.sequence == 0 {
                if start == 0 { first = 0 }
            } else if let at = lines.lastIndex(where: { AuditCrypto.sha256Hex($0) == head.hash }) {
                first = at + 1
            }
            if let first { return Self.chain(lines[first...], from: head, file: path) }
            guard start > 0, reach < Self.tipReach else { return nil }
            reach *= 4
        }
    }

    /// How far back from the trail's end ``tipPastHead`` looks for the head's record.
    static let tipReach: off_t = 4 << 20

    /// The head after `lines`, when each is a record that follows the one before (the first
    /// follows `head`); nil when one does not.
    static func chain(_ lines: ArraySlice<ArraySlice<UInt8>>, from head: AuditHead, file: String)
        -> AuditHead?
    {
        var tip = head
        for slice in lines {
            let line = Array(slice)
            guard line.count <= AuditRecord.maximumLineLength else { return nil }
            guard let (sequence, previous) = AuditRecord.link(of: line, file: file, lineNumber: Int(tip.sequence) + 1),
                sequence == tip.sequence + 1, previous.elementsEqual(tip.hash.utf8)
            else { return nil }
            tip.sequence = sequence
            tip.hash = AuditCrypto.sha256Hex(line)
        }
        return tip
    }

    /// Reads the whole trail, in chunks, to take over records past the head.
    /// - Throws: `errSecIO` when it does not chain from its head.
    private func recover(_ trail: Int32, head: AuditHead) throws(KeygateError) -> (AuditHead, Recovery?) {
        let (verdict, check, torn) = try AuditTrailFile.verify(descriptor: trail, path: path, head: head, anchor: nil)
        if case .broken(let sequence, let reason) = verdict {
            throw KeygateError(
                .io,
                "\(path) does not end where its head says (broken at sequence \(sequence): \(reason)); "
                    + "run 'keygate audit verify'")
        }
        // Not broken: every complete line chains, and the head is one of them.
        var current = head
        var recovery = Recovery(staleHead: head.sequence, records: 0, tornBytes: torn ?? 0)
        let records = UInt64(check.records)
        if records > head.sequence, let last = check.lastHash {
            current = AuditHead(genesis: head.genesis, sequence: records, hash: last)
            recovery.records = records - head.sequence
        }
        return (current, recovery.records > 0 || recovery.tornBytes > 0 ? recovery : nil)
    }

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
    private func append(line: String, to descriptor: Int32, end: off_t) throws(KeygateError) -> Int {
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

    private static func headWritesFail(_ path: String) -> Bool {
        if failingHeadWrites.withLock({ !$0.isEmpty && $0.contains(path) }) { return true }
        #if DEBUG
            if let named = getenv("KEYGATE_TEST_FAIL_HEAD_WRITES") { return String(cString: named) == path }
        #endif
        return false
    }

    func failure(_ what: String) -> KeygateError {
        KeygateError(.io, "\(what): \(String(cString: strerror(errno)))")
    }

    static func recoveryEvent(from staleHead: UInt64, to last: UInt64, tornBytes: Int, restored: UInt64 = 0)
        -> AuditEvent
    {
        var notes: [AuditNote] = []
        if restored > 0 { notes.append(.restoredFromStore(records: restored)) }
        if last > staleHead { notes.append(.headRecovered(from: staleHead, to: last)) }
        if tornBytes > 0 { notes.append(.tornTailCut(bytes: tornBytes)) }
        return AuditEvent(
            kind: .recover, decision: .recovered, notes: notes, processID: ProcessIdentity.processID,
            userID: ProcessIdentity.userID)
    }

    /// The last non-empty line of the trail open at `descriptor` (`size` bytes), read from its
    /// end, and whether a newline ends it; nil for an empty file.
    static func lastLine(of descriptor: Int32, size: off_t, path: String) throws(KeygateError) -> (
        line: [UInt8], terminated: Bool
    )? {
        var size = size
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
                // What follows the last line end (no split into every line of the chunk).
                let line = trimmed.lastIndex(of: 10).map { trimmed[(1 + $0)...] } ?? trimmed
                return (Array(line), tail.last == 10)
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

/// What ``JSONLinesAuditSink/repair(at:restartingAnchor:)`` (or an append that recovered first) did.
public struct AuditRepair: Hashable, Sendable {
    /// The sequence number the head was at.
    public let staleHead: UInt64
    /// How many records past it the head was moved over.
    public let recovered: UInt64
    /// The sequence number of the ``AuditEvent/Kind/recover`` record that says so.
    public let record: UInt64

    /// The length of a partial last line (a crash during a write) that was cut off, or 0.
    public let tornBytes: Int

    /// Whether the store's anchor was replaced by this trail's head (`restartingAnchor`).
    public let anchorRestarted: Bool

    /// How many records the item store held past the trail's end (lost from the trail with a
    /// power loss) were written back, or 0.
    public let restored: UInt64

    /// A repair report.
    public init(
        staleHead: UInt64, recovered: UInt64, record: UInt64, tornBytes: Int = 0, anchorRestarted: Bool = false,
        restored: UInt64 = 0
    ) {
        self.staleHead = staleHead
        self.recovered = recovered
        self.record = record
        self.tornBytes = tornBytes
        self.anchorRestarted = anchorRestarted
        self.restored = restored
    }
}
