public import KeygatePolicy

/// Where a trail's chain stands: its random genesis and its last record. Kept beside the
/// trail so that cutting records off the end is detected too.
public struct AuditHead: Hashable, Sendable {
    /// The random value the first record's `prev` holds (hex).
    public var genesis: String
    /// The last record's sequence number (0 for an empty trail).
    public var sequence: UInt64
    /// The last record's hash, or the genesis for an empty trail.
    public var hash: String

    /// A head.
    public init(genesis: String, sequence: UInt64, hash: String) {
        self.genesis = genesis
        self.sequence = sequence
        self.hash = hash
    }

    /// The head of a new, empty trail with `genesis` (hex of random bytes).
    public init(genesis: String) { self.init(genesis: genesis, sequence: 0, hash: genesis) }

    /// Seals `event` as the next record and moves the head past it.
    public mutating func seal(_ event: AuditEvent, at time: Timestamp) -> AuditRecord {
        let record = AuditRecord(sequence: sequence + 1, time: time, previousHash: hash, event: event)
        sequence = record.sequence
        hash = record.hash
        return record
    }

    /// `{"genesis": …, "sequence": …, "hash": …}`.
    public var line: String {
        JSONValue.object([
            JSONMember("genesis", .string(genesis)), JSONMember("sequence", .number(String(sequence))),
            JSONMember("hash", .string(hash)),
        ]).rendered
    }

    /// Parses ``line``.
    public init(line text: String, file: String) throws(InputFileError) {
        // The layout ``line`` writes (the trail's head file, the store's anchor) without the JSON
        // parser; any other text through it.
        if let head = AuditHeadFile.plainHead(text.utf8) {
            self = head
            return
        }
        let fields = try JSONField.parse(text, file: file).object(allowing: ["genesis", "sequence", "hash"])
        guard let genesis = fields["genesis"], let sequence = fields["sequence"], let hash = fields["hash"] else {
            throw InputFileError(file: file, line: 1, column: 1, field: "", problem: "needs genesis, sequence and hash")
        }
        self.init(genesis: try genesis.string(), sequence: UInt64(max(try sequence.int(), 0)), hash: try hash.string())
    }
}

/// The result of checking a trail.
public enum AuditVerification: Hashable, Sendable, CustomStringConvertible {
    /// Every record is in place, in order, unchanged, and the trail ends where its head says
    /// (or at the last record the item store holds for it, which stands for the head).
    case intact(records: Int)
    /// Every record is in place, in order and unchanged, but the head stops at record `head`:
    /// the records after it chain correctly from it, so they were written but the head was not
    /// (a crash or a failed head write). Not tampering: the next record, or `keygate audit
    /// repair`, brings the head forward and records the recovery.
    case headBehind(records: Int, head: UInt64)
    /// Every complete record is in place (as for ``intact(records:)`` or
    /// ``headBehind(records:head:)``), and past the head the trail ends in a partial line of
    /// `bytes` bytes: a crash during a write. Not tampering: the next record, or `keygate audit
    /// repair`, cuts it off and records that.
    case tornTail(records: Int, head: UInt64, bytes: Int)
    /// The trail's `records` records are in place, and `held` more that follow them are held
    /// in the item store (``AuditAnchorKeeper/heldRecords()``): a power loss took them
    /// from the trail after the store had committed them with their items. Not tampering: the
    /// next record, or `keygate audit repair`, writes them back and records that.
    case heldInStore(records: Int, held: Int)
    /// The chain breaks at this sequence number.
    case broken(sequence: UInt64, reason: String)

    /// `intact (N records)`, `intact (N records), but …` or `broken at sequence N: reason`.
    public var description: String {
        switch self {
        case .intact(let records): "intact (\(records) records)"
        case .headBehind(let records, let head):
            "intact (\(records) records), but the head is at record \(head): records \(head + 1)…\(records) were "
                + "written but the head was not (a crash or a failed head write); the next record or "
                + "'keygate audit repair' brings it forward"
        case .tornTail(let records, let head, let bytes):
            "intact (\(records) records, head at record \(head)), but it ends in a partial record of \(bytes) "
                + "bytes (a crash during a write); the next record or 'keygate audit repair' cuts it off"
        case .heldInStore(let records, let held):
            "intact (\(records) records); \(held) more held in the store (not flushed to the trail before a "
                + "power loss), restored by the next record or 'keygate audit repair'"
        case .broken(let sequence, let reason): "broken at sequence \(sequence): \(reason)"
        }
    }
}

/// Checks a trail's hash chain, and its end against the head kept beside it.
public enum AuditVerifier {
    /// Verifies the trail's lines (empty lines are not allowed) against `head`.
    ///
    /// A deleted or reordered record is reported at the first sequence number out of place;
    /// an edited record at its own sequence number (its hash no longer matches the next
    /// record's `prev`, or the head); records cut off the end at the first missing number.
    /// Records past the head that chain correctly from it are ``AuditVerification/headBehind(records:head:)``,
    /// not tampering; a head that matches no record is.
    ///
    /// With an `anchor` (the copy of the head the item store keeps, ``AuditAnchorKeeper``), a
    /// trail that does not reach it, started from another genesis, or holds another record at
    /// its sequence number is broken too: it was deleted, restarted or cut back with its head.
    /// The anchor may lag the trail.
    public static func verify(
        lines: [String], head: AuditHead?, anchor: AuditHead? = nil, file: String = "audit trail"
    ) -> AuditVerification {
        var check = AuditChainCheck(head: head, anchor: anchor, file: file)
        for line in lines where !check.add(Array(line.utf8)) { break }
        return check.result
    }
}

/// Checks a trail one line at a time, in memory that does not grow with the trail: what
/// ``AuditVerifier/verify(lines:head:anchor:file:)`` and ``AuditTrailFile`` use.
public struct AuditChainCheck: Sendable {
    /// The head kept beside the trail, when there is one.
    public let head: AuditHead?
    /// The anchor kept in the item store, when there is one.
    public let anchor: AuditHead?
    /// The trail's name in messages.
    public let file: String
    /// The complete records taken so far.
    public private(set) var records = 0
    /// The hash of the last record taken (the genesis before the first).
    public private(set) var lastHash: String?
    private var hashAtHead: String?
    private var hashAtAnchor: String?
    private var broken: AuditVerification?

    /// A check of a trail that should end at `head` and reach `anchor`.
    public init(head: AuditHead?, anchor: AuditHead? = nil, file: String = "audit trail") {
        self.head = head
        self.anchor = anchor
        self.file = file
        lastHash = head?.genesis
        hashAtHead = head?.sequence == 0 ? head?.genesis : nil
    }

    /// Takes the next line (its UTF-8 bytes, without the newline).
    /// - Returns: false once the chain is broken: nothing after it changes the result.
    public mutating func add(_ line: [UInt8]) -> Bool {
        addLine(of: line.count, line)
    }

    /// Takes a line of `length` bytes that is too long to be a record (its bytes not kept).
    /// - Returns: false: the chain is broken there.
    public mutating func addOversizedLine(of length: Int) -> Bool {
        addLine(of: length, nil)
    }

    private mutating func addLine(of length: Int, _ line: [UInt8]?) -> Bool {
        guard broken == nil else { return false }
        let expectedSequence = UInt64(records + 1)
        guard let line, length <= AuditRecord.maximumLineLength else {
            broken = .broken(
                sequence: expectedSequence,
                reason: "line \(records + 1) is \(length) bytes, longer than the "
                    + "\(AuditRecord.maximumLineLength) a trail line may hold")
            return false
        }
        // The chain is checked over each line's exact bytes. A line in the writer's own shape
        // gives its sequence number and `prev` from its ends, unparsed (any change to it breaks
        // the chain at the next record or the head); any other line is parsed as a record.
        let sequence: UInt64
        let previous: ArraySlice<UInt8>
        if let link = AuditRecord.chainLink(line) {
            (sequence, previous) = link
        } else {
            let record: AuditRecord
            do {
                record = try AuditRecord(line: line, file: file, lineNumber: records + 1)
            } catch {
                broken = .broken(
                    sequence: expectedSequence, reason: "line \(records + 1) is not an audit record: \(error)")
                return false
            }
            sequence = record.sequence
            previous = ArraySlice(record.previousHash.utf8)
        }
        guard sequence == expectedSequence else {
            broken = .broken(
                sequence: expectedSequence,
                reason: "expected record \(expectedSequence), found \(sequence) (deleted or reordered)")
            return false
        }
        if let expected = lastHash, !previous.elementsEqual(expected.utf8) {
            broken =
                expectedSequence == 1
                ? .broken(sequence: 1, reason: "the first record does not start from the trail's genesis")
                : .broken(
                    sequence: expectedSequence - 1,
                    reason:
                        "record \(expectedSequence - 1) was changed (record \(expectedSequence) no longer matches it)")
            return false
        }
        let hash = AuditCrypto.sha256Hex(line)
        records += 1
        lastHash = hash
        if sequence == head?.sequence { hashAtHead = hash }
        if sequence == anchor?.sequence { hashAtAnchor = hash }
        return true
    }

    /// The verdict on the lines taken so far, as the whole trail.
    public var result: AuditVerification {
        if let broken { return broken }
        let verdict = chainVerdict
        guard let anchor else { return verdict }
        if case .broken = verdict { return verdict }
        let genesis = head?.genesis ?? ""
        let reached = AuditHead(
            genesis: genesis, sequence: UInt64(records), hash: records == 0 ? genesis : lastHash ?? genesis)
        if let problem = reached.mismatch(with: anchor) {
            let sequence =
                genesis != anchor.genesis
                ? 1 : reached.sequence < anchor.sequence ? reached.sequence + 1 : anchor.sequence
            return .broken(sequence: sequence, reason: problem)
        }
        if anchor.sequence > 0, hashAtAnchor != anchor.hash {
            return .broken(
                sequence: anchor.sequence, reason: "record \(anchor.sequence) does not match the store's anchor")
        }
        return verdict
    }

    private var chainVerdict: AuditVerification {
        let last = UInt64(records)
        guard let head else { return .intact(records: records) }
        if head.sequence > last {
            return .broken(sequence: last + 1, reason: "records \(last + 1)…\(head.sequence) were cut off the end")
        }
        if head.sequence < last {
            guard hashAtHead == head.hash else {
                return .broken(
                    sequence: head.sequence,
                    reason:
                        "the head says record \(head.sequence) has another hash (the head or the record was changed)")
            }
            return .headBehind(records: records, head: head.sequence)
        }
        if last > 0, head.hash != lastHash {
            return .broken(sequence: last, reason: "record \(last) was changed (it no longer matches the head)")
        }
        return .intact(records: records)
    }
}
