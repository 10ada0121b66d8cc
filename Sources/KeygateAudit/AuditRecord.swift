public import KeygatePolicy

/// An audit event sealed into the trail: its sequence number, time, and the SHA-256 of the
/// previous record's line, so deleting, reordering or editing a record breaks the chain.
///
/// Its ``line`` is the JSON Lines form, keys in a fixed order; its ``hash`` is the SHA-256 of
/// that line's UTF-8 bytes.
public struct AuditRecord: Hashable, Sendable {
    /// 1 for the first record of a trail, then one more each time.
    public let sequence: UInt64
    /// When it was recorded.
    public let time: Timestamp
    /// The SHA-256 (hex) of the previous record's line; for the first, the trail's random genesis.
    public let previousHash: String
    /// What was recorded.
    public let event: AuditEvent
    /// The JSON line (without the newline), rendered once when the record is made, or the
    /// line it was parsed from.
    public let line: String
    /// The SHA-256 (hex) of ``line``.
    public let hash: String

    /// A record.
    public init(sequence: UInt64, time: Timestamp, previousHash: String, event: AuditEvent) {
        self.sequence = sequence
        self.time = time
        self.previousHash = previousHash
        self.event = event
        var writer = AuditLineWriter()
        writer.record(sequence: sequence, time: time, previousHash: previousHash, event: event)
        (line, hash) = writer.withLine { bytes in
            (String(decoding: bytes, as: UTF8.self), AuditCrypto.sha256Hex(UnsafeRawBufferPointer(bytes)))
        }
    }

    /// `record` seen as holding one of its decisions, `event` (one of its
    /// ``AuditEvent/decisions``): the same sequence number, time, line and hash.
    public init(_ record: AuditRecord, decision event: AuditEvent) {
        sequence = record.sequence
        time = record.time
        previousHash = record.previousHash
        self.event = event
        line = record.line
        hash = record.hash
    }

    /// The sequence number and `prev` of any record line: read from its two ends when it is in
    /// this type's own shape (``chainLink(_:)``), parsed otherwise; nil when it is not a record.
    static func link(of line: [UInt8], file: String, lineNumber: Int) -> (
        sequence: UInt64, previous: ArraySlice<UInt8>
    )? {
        if let link = chainLink(line) { return link }
        guard let record = try? AuditRecord(line: line, file: file, lineNumber: lineNumber) else { return nil }
        return (record.sequence, ArraySlice(record.previousHash.utf8))
    }

    /// The sequence number and `prev` of a line in the exact shape this type renders
    /// (`{"seq": N, "time": …, "prev": "<64 hex digits>"}`), read from its two ends without
    /// parsing the rest; nil for any other line.
    static func chainLink(_ line: [UInt8]) -> (sequence: UInt64, previous: ArraySlice<UInt8>)? {
        let head = Array(#"{"seq": "#.utf8)
        let tail = Array(#", "prev": ""#.utf8)
        let hashLength = 64
        guard line.count > head.count + tail.count + hashLength + 2, line.starts(with: head),
            line[line.count - 2] == UInt8(ascii: "\""), line[line.count - 1] == UInt8(ascii: "}")
        else { return nil }
        let hashStart = line.count - 2 - hashLength
        guard line[(hashStart - tail.count)..<hashStart].elementsEqual(tail) else { return nil }
        let previous = line[hashStart..<(line.count - 2)]
        guard previous.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else { return nil }
        var sequence: UInt64 = 0
        var index = head.count
        while index < line.count, (48...57).contains(line[index]) {
            let (times, overflow) = sequence.multipliedReportingOverflow(by: 10)
            guard !overflow, index - head.count < 20 else { return nil }
            sequence = times + UInt64(line[index] - 48)
            index += 1
        }
        guard index > head.count, sequence >= 1, line[head.count] != 48,
            line[index...].starts(with: Array(#", "time": "#.utf8))
        else { return nil }
        return (sequence, previous)
    }

    /// The longest line a trail may hold, in bytes (64 KiB): longer lines are refused by the
    /// sink when written and reported by the verifier with their line number.
    public static let maximumLineLength = 64 << 10

    /// Parses what ``LineCursor/decision(_:pieces:)`` renders, into an event of `kind` (the rest of the
    /// event from the record's own fields).
    private static func decision(
        _ fields: [String: JSONField], kind: AuditEvent.Kind, in root: JSONField
    ) throws(InputFileError) -> AuditEvent {
        func required(_ key: String) throws(InputFileError) -> JSONField {
            guard let field = fields[key] else { throw root.error("missing '\(key)'") }
            return field
        }
        var item: ItemIdentity?
        if let field = fields["item"] {
            let parts = try field.object(allowing: ["service", "account", "accessGroup", "synchronizable"])
            guard let service = parts["service"], let account = parts["account"], let group = parts["accessGroup"]
            else {
                throw field.error("an item needs service, account and accessGroup")
            }
            item = ItemIdentity(
                accessGroup: try group.string(), account: try account.string(), service: try service.string(),
                synchronizable: try parts["synchronizable"]?.bool() ?? false)
        }
        var status: KeygateStatus?
        if let field = fields["status"], field.node.value != .null {
            status = KeygateStatus(rawValue: Int32(try field.int()))
        }
        var factors: [AuditEvent.ProvedFactor] = []
        for entry in try required("factors").array() {
            let parts = try entry.object(allowing: ["factor", "secondsAgo"])
            guard let factor = parts["factor"], let ago = parts["secondsAgo"] else {
                throw entry.error("incomplete factor")
            }
            factors.append(
                AuditEvent.ProvedFactor(
                    factor: Factor(rawValue: try factor.choice(Factor.allCases.map(\.rawValue)))!,
                    secondsAgo: try ago.int()))
        }
        var accessControl: String?
        if let field = fields["accessControl"], field.node.value != .null { accessControl = try field.string() }
        let (reasons, notes) = AuditEvent.reasonsAndNotes(
            try required("reasons").array().map { (field: JSONField) throws(InputFileError) in try field.string() },
            kind: kind)
        // A reused proof is written as its note; read back, the factor is marked again.
        for note in notes {
            guard case .proofReused(let factor, let window) = note else { continue }
            for index in factors.indices where factors[index].factor == factor { factors[index].reusedWithin = window }
        }
        var event = AuditEvent(
            kind: kind, item: item,
            ruleIDs: try required("rules").array().map { (field: JSONField) throws(InputFileError) in
                try field.string()
            },
            decision: AuditEvent.Verdict(
                rawValue: try required("decision").choice(AuditEvent.Verdict.allCases.map(\.rawValue)))!,
            status: status,
            reasons: reasons, notes: notes, factors: factors)
        // The text as written: the record reads back byte for byte, whether or not it parses.
        event.accessControlText = accessControl
        return event
    }

    /// Parses what ``LineCursor/record(sequence:time:previousHash:event:)`` renders as
    /// `caller`: `{"uid": …, "pid": …, "exe": … or null, "session": … or null}`.
    private static func caller(_ field: JSONField) throws(InputFileError) -> AuditCaller {
        let parts = try field.object(allowing: ["uid", "pid", "exe", "session"])
        guard let uid = parts["uid"], let pid = parts["pid"] else { throw field.error("needs uid and pid") }
        guard let userID = UInt32(exactly: try uid.int()) else { throw uid.error("is not a uid") }
        guard let processID = Int32(exactly: try pid.int()) else { throw pid.error("is not a pid") }
        func optionalString(_ key: String) throws(InputFileError) -> String? {
            guard let part = parts[key], part.node.value != .null else { return nil }
            return try part.string()
        }
        return AuditCaller(
            userID: userID, processID: processID, executable: try optionalString("exe"),
            session: try optionalString("session"))
    }

    /// Parses one line of a trail.
    /// - Throws: ``KeygatePolicy/InputFileError`` naming the line and field.
    public init(line text: String, file: String, lineNumber: Int) throws(InputFileError) {
        try self.init(line: Array(text.utf8), file: file, lineNumber: lineNumber)
    }

    /// Parses one line of a trail, given as its UTF-8 bytes (without the newline).
    /// - Throws: ``KeygatePolicy/InputFileError`` naming the line and field.
    public init(line bytes: [UInt8], file: String, lineNumber: Int) throws(InputFileError) {
        guard bytes.count <= Self.maximumLineLength else {
            throw InputFileError(
                file: file, line: lineNumber, column: 0, field: "",
                problem: "the line is \(bytes.count) bytes, longer than \(Self.maximumLineLength)")
        }
        let root: JSONField
        do {
            root = JSONField(node: try JSONParser.parse(bytes: bytes), path: "", file: file)
        } catch {
            throw InputFileError(
                file: file, line: lineNumber, column: error.column, field: "", problem: "invalid JSON: \(error.message)"
            )
        }
        func at(_ error: InputFileError) -> InputFileError {
            InputFileError(
                file: file, line: lineNumber, column: error.column, field: error.field, problem: error.problem)
        }
        do throws(InputFileError) {
            let fields = try root.object(allowing: [
                "seq", "time", "op", "item", "accessControl", "rules", "decision", "status", "statusName", "reasons",
                "factors", "more", "pamService", "pid", "uid", "exe", "caller", "prev",
            ])
            func required(_ key: String) throws(InputFileError) -> JSONField {
                guard let field = fields[key] else { throw root.error("missing '\(key)'") }
                return field
            }
            func optionalString(_ key: String) throws(InputFileError) -> String? {
                guard let field = fields[key], field.node.value != .null else { return nil }
                return try field.string()
            }
            let sequence = try required("seq").int()
            guard sequence >= 1 else { throw try required("seq").error("must be at least 1") }
            let kindText = try required("op").choice(AuditEvent.Kind.allCases.map(\.rawValue))
            let kind = AuditEvent.Kind(rawValue: kindText)!
            var event = try Self.decision(fields, kind: kind, in: root)
            event.pamService = try optionalString("pamService")
            event.processID = Int32(truncatingIfNeeded: try required("pid").int())
            event.userID = UInt32(truncatingIfNeeded: try required("uid").int())
            event.executable = try optionalString("exe")
            if let caller = fields["caller"] { event.caller = try Self.caller(caller) }
            if let more = fields["more"] {
                for entry in try more.array() {
                    let parts = try entry.object(allowing: [
                        "item", "accessControl", "rules", "decision", "status", "statusName", "reasons", "factors",
                    ])
                    event.more.append(try Self.decision(parts, kind: kind, in: entry))
                }
            }
            self.sequence = UInt64(sequence)
            self.time = Timestamp(nanoseconds: Int64(try required("time").int()))
            self.previousHash = try required("prev").string()
            self.event = event
            self.line = String(decoding: bytes, as: UTF8.self)
            self.hash = AuditCrypto.sha256Hex(bytes)
        } catch {
            throw at(error)
        }
    }
}
