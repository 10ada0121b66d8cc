import Dispatch
import Glibc
public import KeygatePolicy
import Synchronization

// Riding the item commit: inside a facade call (``Auditor/collecting(_:)``), a
// ``JSONLinesAuditSink/Durability/eachRecord`` sink whose anchor is kept in an item store writes
// a record to the trail (the page cache: it survives `kill -9`) and offers it (``AuditOffer``)
// instead of `fdatasync`ing it; the call's item write (handed the ``AuditCall``) commits it with
// the item, in one commit. Before the call returns the sink settles: records a committed write
// holds are durable; any others are `fdatasync`ed then.

extension JSONLinesAuditSink {
    /// How many records the store may hold for a trail before an append flushes instead
    /// (and the store is told to release them): 64.
    public static let heldLimit = 64

    /// The facade call to hold new records through sequence number `last` for, when they may
    /// be held: inside a `call`, under ``Durability/eachRecord``, with an anchor kept in an item
    /// store, `last` no more than ``heldLimit`` past the last record known
    /// durable in the trail (the store may keep them in a ring of that many: a record it
    /// overwrites must be durable), and no records of another writer taken over on this append
    /// (`recovered`: those are flushed, never built on unflushed).
    func holdingCall(_ call: AuditCall?, through last: UInt64, recovered: Bool, state: State) -> AuditCall? {
        guard mayHoldRecords, !recovered, let call, state.durable <= last,
            last - state.durable <= UInt64(Self.heldLimit)
        else { return nil }
        return call
    }

    /// Whether this sink ever holds records: ``Durability/eachRecord``, with an anchor kept in an item store.
    var mayHoldRecords: Bool { durability == .eachRecord && keeper != nil }

    /// Offers `records` (just written, not flushed) and the new `head` to the store, and leaves
    /// the head file for ``settle()`` (it is written only once the records are durable, so it
    /// never leads both the durable trail and the store).
    func hold(_ records: [AuditRecord], head: AuditHead, in call: AuditCall, state: inout State) {
        let first = state.anchor?.genesis != head.genesis
        shared.offer.withLock { offer in
            // The store holds no anchor of this trail yet: the first rides with the records.
            if first { offer.anchor = head }
            offer.hold(records.map { HeldAuditRecord(sequence: $0.sequence, line: $0.line) }, head: head)
        }
        state.held += records.count
        state.unsettled = true
        state.headUnwritten = true
        state.head = head
        state.written = AuditTrailFileState(descriptor: state.trail)
        call.hold(self)
    }

    /// Where held records' early flushes run, one at a time.
    private static let heldFlusher = DispatchQueue(label: "keygate.audit.held-flush")

    /// Waits until the early flushes of held records started so far have finished (tests).
    static func waitForHeldFlushes() { heldFlusher.sync {} }

    /// Once `head` is half ``heldLimit`` past the last record known durable, and no early flush
    /// is in flight, flushes the trail on ``heldFlusher``, off the caller: once that succeeds
    /// the records through `head` are durable (their slots in the store may be reused, and the
    /// store is offered their release), so an append reaching the bound seldom flushes itself.
    /// A flush that fails, or finishes after the trail was replaced, changes nothing (the
    /// append at the bound then flushes, as without it).
    private func flushHeldInBackground(through head: AuditHead, state: inout State) {
        guard !state.heldFlushing, head.sequence >= state.durable &+ UInt64(Self.heldLimit / 2),
            let file = state.trailFile
        else { return }
        let descriptor = fcntl(state.trail, F_DUPFD_CLOEXEC, 0)
        guard descriptor >= 0 else { return }
        state.heldFlushing = true
        state.earlyFlushes += 1
        let shared = shared
        let path = path
        Self.heldFlusher.async {
            let synced = Self.sync(descriptor, path: path)
            close(descriptor)
            shared.state.withLock { state in
                state.heldFlushing = false
                guard synced, state.trailFile == file, state.head.genesis == head.genesis else { return }
                state.durable = max(state.durable, head.sequence)
                shared.offer.withLock { $0.release(through: head.sequence) }
                state.releaseOffered = max(state.releaseOffered, head.sequence)
            }
        }
    }

    /// After a flush of the trail through `sequence`: the trail is durable that far, and the
    /// store is told it may forget the records it holds that far (its next item transaction
    /// writes the release) when it holds any, or its release lags by half ``heldLimit`` (so a
    /// process that finds it there need not flush before it holds).
    func releaseHeld(through sequence: UInt64, state: inout State) {
        guard keeper != nil else { return }
        state.durable = max(state.durable, sequence)
        let lags = durability == .eachRecord && sequence >= state.releaseOffered &+ UInt64(Self.heldLimit / 2)
        guard state.held > 0 || lags else { return }
        shared.offer.withLock { $0.release(through: sequence) }
        state.releaseOffered = max(state.releaseOffered, sequence)
        state.held = 0
    }

    /// Makes the records held since the last settle durable: those an item transaction has
    /// committed already are; any others (a read, a refusal, a failed write, another store's
    /// write) are `fdatasync`ed now, and the head file is then brought up to them. After a commit
    /// the head file is not written (no lock, no write): the last record the store holds
    /// stands for it until the next flush of the trail (at most ``heldLimit`` records later)
    /// or ``flush()``; a loader that finds the trail past its head as far as the store's last
    /// held record takes that tip over without a ``AuditEvent/Kind/recover`` record, and
    /// ``AuditTrailFile/verify(at:anchors:privacy:)`` calls such a trail intact. What
    /// ``Auditor/collecting(_:)`` calls before a facade call returns or throws.
    /// - Throws: `errSecIO` when the trail cannot be flushed, or its head written after a
    ///   flush (the call then fails, as an append that cannot flush does).
    public func settle() throws(KeygateError) {
        try shared.state.withLock { (state: inout State) throws(KeygateError) in
            guard state.unsettled else { return }
            state.unsettled = false
            guard state.trail >= 0, keeper != nil else { return }
            let flushed = shared.offer.withLock { $0.withdrawHeld() }
            if flushed {
                guard Self.sync(state.trail, path: path) else {
                    let error = failure("cannot flush \(path)")
                    state.size = -1
                    state.written = nil
                    throw error
                }
                releaseHeld(through: state.head.sequence, state: &state)
                if anchorDue(state.head, state: state) {
                    try saveAnchor(state.head)
                    state.anchor = state.head
                } else {
                    offerAnchor(state.head)
                }
            } else {
                // Committed with the item, and the head with them as the anchor. The head file
                // is left where it is: the store's last held record stands for it (a loader
                // takes the trail's tip over without a recover record, verify calls the trail
                // intact), and it is written at the next flush of the trail or ``flush()``.
                // Only here is an early flush worth starting: a call whose records no
                // transaction committed was just flushed above, so one started when it held
                // them would only have flushed the same records twice (and, in a short-lived
                // process such as `keygate get`, started a thread to do it).
                state.anchor = state.head
                flushHeldInBackground(through: state.head, state: &state)
                state.pending = 0
                return
            }
            state.pending = 0
            guard state.headUnwritten, flock(state.trail, LOCK_EX) == 0 else { return }
            state.locked = true
            defer { Self.unlock(&state) }
            // Another writer appended since: the tip is that writer's to write.
            guard lseek(state.trail, 0, SEEK_END) == state.size else { return }
            try writeHead(state.head, state: &state)
            state.headUnwritten = false
        }
    }

    /// What the store holds for this trail, read once on load: the sequence number of the
    /// last held record (nil when none) and the trail's anchor; nil without a store that holds
    /// records (the anchor is then asked for on its own). The store's release is the last
    /// record known durable.
    func heldOnLoad(_ state: inout State) throws(KeygateError) -> (last: UInt64?, anchor: AuditHead?)? {
        guard let keeper else { return nil }
        let kept = try keeper.kept()
        state.held = kept.count
        state.durable = kept.released
        state.releaseOffered = kept.released
        return (kept.last, kept.anchor)
    }

    /// Lets go of every record the store holds for this trail (a trail restarted).
    func releaseAllHeld(_ state: inout State) {
        shared.offer.withLock { $0.release(through: .max) }
        state.held = 0
        state.durable = 0
        state.releaseOffered = 0
    }

    /// What ``restore(_:state:size:genesis:restartingAnchor:)`` wrote back.
    struct Restored {
        /// The trail's length after.
        var size: off_t
        /// How many records were written back.
        var records: UInt64
        /// The length of the partial line cut off before them.
        var tornBytes: Int
    }

    /// Writes back the held records past the trail's last whole record, when they chain from
    /// it: a partial last line (a power loss during the write) is cut first, when it is the
    /// start of the first of them; the trail is then `fdatasync`ed.
    /// - Returns: what was written back, or nil when the trail already holds every held record.
    /// - Throws: `errSecIO` when the records past the trail's end do not chain from it, or a
    ///   partial last line is not the start of the first of them (another writer's records in
    ///   between, or tampering: never dropped), unless `restartingAnchor` (they are then let go).
    func restore(state: inout State, size: off_t, genesis: String, restartingAnchor: Bool) throws(KeygateError)
        -> Restored?
    {
        guard let keeper else { return nil }
        let held = try keeper.heldRecords()
        guard let last = held.last else { return nil }
        var whole = size
        var torn: [UInt8] = []
        var tip = AuditHead(genesis: genesis)
        if let line = try Self.lastLine(of: state.trail, size: size, path: path) {
            if !line.terminated {
                torn = line.line
                whole = size - off_t(torn.count)
            }
            if let previous = try Self.lastLine(of: state.trail, size: whole, path: path), previous.terminated {
                guard let link = AuditRecord.link(of: previous.line, file: path, lineNumber: 0)?.sequence else {
                    throw KeygateError(.io, "the last record of \(path) cannot be read; run 'keygate audit verify'")
                }
                tip = AuditHead(genesis: genesis, sequence: link, hash: AuditCrypto.sha256Hex(previous.line))
            }
        }
        guard last.sequence > tip.sequence else { return nil }
        let past = held.filter { $0.sequence > tip.sequence }
        let lines = past.map { ArraySlice(Array($0.line.utf8)) }
        // Chained means numbered on from the trail's last record too (chain checks each sequence).
        let chained = Self.chain(lines[...], from: tip, file: path) != nil
        guard chained, torn.isEmpty || lines[0].starts(with: torn) else {
            if restartingAnchor {
                releaseAllHeld(&state)
                return nil
            }
            throw KeygateError(
                .io,
                "the store holds records \(past[0].sequence)…\(last.sequence) of \(path) that do not follow its "
                    + "last record \(tip.sequence); run 'keygate audit verify'")
        }
        guard ftruncate(state.trail, whole) == 0 else { throw failure("cannot cut the partial record off \(path)") }
        var bytes: [UInt8] = []
        for line in lines {
            bytes += line
            bytes.append(10)
        }
        try append(bytes, to: state.trail, size: whole)
        guard Self.sync(state.trail, path: path) else { throw failure("cannot flush \(path)") }
        return Restored(size: whole + off_t(bytes.count), records: UInt64(past.count), tornBytes: torn.count)
    }
}
