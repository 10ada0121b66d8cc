import Dispatch
import Glibc
import KeygateItems
import KeygatePolicy
import Synchronization

// Reading the trail again (first use, or another process appended): the head and the trail's
// end checked against each other and the anchor, records past a stale head taken over, a torn
// last line cut off.

extension JSONLinesAuditSink {
    /// What reading the trail again found.
    struct Loaded {
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
    func load(_ state: inout State, size found: off_t, restartingAnchor: Bool) throws(KeygateError) -> Loaded {
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
    func endsAtHead(_ trail: Int32, size: off_t, head: AuditHead) throws(KeygateError) -> Bool {
        guard let last = try Self.lastLine(of: trail, size: size, path: path) else { return false }
        return last.terminated && AuditCrypto.sha256Hex(last.line) == head.hash
    }

    /// The chain's tip when the trail ends in whole records that chain from `head` (the head
    /// itself when its record ends the trail), read back from the end only as far as the
    /// head's record, and no further than ``tipReach`` bytes; nil when the head's record is not
    /// within reach, a record after it does not chain, or the trail ends in a partial line
    /// (then the whole trail is checked, as after a crash).
    func tipPastHead(_ trail: Int32, size: off_t, head: AuditHead) throws(KeygateError) -> AuditHead? {
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
    func recover(_ trail: Int32, head: AuditHead) throws(KeygateError) -> (AuditHead, Recovery?) {
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
