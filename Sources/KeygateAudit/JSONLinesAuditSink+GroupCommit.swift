import Glibc
public import KeygatePolicy
import Synchronization

// The group-commit append between flushes: the sink holds the trail's lock and
// knows where the trail ends, so an append is the record's line rendered into a buffer the
// sink keeps, its SHA-256 taken from those bytes, and one `write`; no ``AuditRecord`` (nor its
// line as a `String`) is made for an ``Auditor`` that never looks at it.

extension JSONLinesAuditSink {
    /// Seals `event` at `time` as the next record and writes it, as ``append(_:at:)`` does (the
    /// same line, chain, durability and locking), returning nothing.
    ///
    /// Under ``Durability/groupCommit(records:)``, an append between flushes (the sink holds the
    /// trail's lock since its last append, no flush is due and none failed) renders the line
    /// straight into a buffer the sink reuses, hashes those bytes and writes them with their
    /// newline in one `write`. Any other append (the first, one after the lock was given up,
    /// one that starts a flush, one after a failed flush, every one under
    /// ``Durability/eachRecord``) is made as ``append(_:at:)`` makes it.
    /// Under ``Durability/eachRecord``, inside a facade's `call`, the record may be held for the
    /// call's item write (see the type's discussion).
    /// - Throws: `errSecIO` when the record cannot be written (nothing of it is left in the
    ///   trail), as ``append(_:at:)``.
    public func store(_ event: AuditEvent, at time: Timestamp, in call: AuditCall?) throws(KeygateError) {
        guard case .groupCommit(let count) = durability else {
            _ = try write([event], at: time, in: call)
            return
        }
        if let call, keeper != nil { call.touch(self) }
        try shared.state.withLock { (state: inout State) throws(KeygateError) in
            do throws(KeygateError) {
                guard state.locked, state.trail >= 0, state.size >= 0, state.headFile >= 0,
                    state.pending + 1 < count, !flushFailure.hasFailed
                else {
                    _ = try write(
                        [event], at: time, in: call, restartingAnchor: false, reread: false, state: &state)
                    return
                }
                try appendBetweenFlushes(event, at: time, state: &state)
            } catch {
                // As ``append(_:at:)``: read the trail again next time rather than trust what is held.
                state.size = -1
                state.written = nil
                throw error
            }
        }
    }

    /// Seals and stores `events` together, as ``append(contentsOf:at:)`` does (one write, and
    /// as the durability says one flush, for all of them), returning nothing; inside a facade's
    /// `call` they may be held for its item write, as ``store(_:at:in:)``.
    public func store(contentsOf events: [AuditEvent], at time: Timestamp, in call: AuditCall?) throws(KeygateError) {
        guard !events.isEmpty else { return }
        _ = try write(events, at: time, in: call)
    }

    /// Seals and writes `event` while the sink holds the lock between flushes: the head moves
    /// in memory (the next flush writes it), the lock stays held, and the idle release is told
    /// of the append.
    private func appendBetweenFlushes(_ event: AuditEvent, at time: Timestamp, state: inout State)
        throws(KeygateError)
    {
        var buffer: [UInt8] = []
        swap(&buffer, &state.line)  // moved out, so reusing it copies nothing
        var writer = AuditLineWriter(reusing: consume buffer)
        defer { state.line = writer.take() }
        let sequence = state.headSequence + 1
        // The previous hash from the bytes the last append kept, or (the first append after a
        // flush or a lock) the head's text.
        let previousDigest = state.tip
        let previousHash = previousDigest == nil ? state.head.hash : ""
        state.linePieces.previousDigest = previousDigest
        writer.record(
            sequence: sequence, time: time, previousHash: previousHash, event: event, pieces: &state.linePieces)
        let length = writer.length
        guard length <= AuditRecord.maximumLineLength else {
            throw KeygateError(
                .io,
                "the audit record would be \(length) bytes, longer than the "
                    + "\(AuditRecord.maximumLineLength) a trail line may hold; nothing was written")
        }
        let hash = writer.withLine { AuditCrypto.sha256(UnsafeRawBufferPointer($0)) }
        let size = state.size
        let trail = state.trail
        try writer.withTerminatedLine { (line: UnsafeBufferPointer<UInt8>) throws(KeygateError) in
            try append(UnsafeRawBufferPointer(line), to: trail, size: size)
        }
        state.size += off_t(length + 1)
        state.pending += 1
        state.advanceHead(to: sequence, hash: hash)
        state.headUnwritten = true
        shared.appends.add(1, ordering: .relaxed)
        scheduleRelease(&state)
    }
}
