import KeygatePolicy
import Synchronization

/// Renders a record's JSON line straight into bytes, once: the one place an audit event
/// becomes text. Keys in a fixed order, `", "` and `": "` between members, strings escaped as
/// RFC 8259 asks (quote, backslash, control characters), everything else verbatim UTF-8.
///
/// The line is written through a raw cursor (``LineCursor``) into a buffer the writer keeps
/// (its elements are storage: the line is its first ``length`` bytes, a newline after them),
/// rendered again, once, into one as large as the first pass measured in the rare case it does
/// not fit; a sink that keeps the buffer (``init(reusing:)``, ``take()``) renders line after
/// line with no allocation.
struct AuditLineWriter {
    /// The buffer the line is rendered into; only its first ``length`` + 1 bytes are the line
    /// and its newline.
    private var storage: [UInt8]
    /// The rendered line's length, without its newline.
    private(set) var length = 0

    /// A writer with room for a usual record (an item decision's line runs to about 520 bytes).
    init() { storage = [UInt8](repeating: 0, count: Self.usualCapacity) }

    /// A writer that renders into `buffer` (taken from ``take()``), keeping it when it is large
    /// enough: a sink's buffer used again line after line.
    init(reusing buffer: consuming [UInt8]) {
        storage = buffer
        if storage.count < Self.usualCapacity { storage = [UInt8](repeating: 0, count: Self.usualCapacity) }
    }

    /// The room a writer starts with.
    private static let usualCapacity = 2048

    /// The rendered line's bytes, without the newline (what its hash is taken over).
    func withLine<Result, Failure: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(Failure) -> Result)
        throws(Failure) -> Result
    {
        try storage.withUnsafeBufferPointer { (all: UnsafeBufferPointer<UInt8>) throws(Failure) -> Result in
            try body(UnsafeBufferPointer(rebasing: all[..<length]))
        }
    }

    /// The rendered line's bytes followed by its newline, as a trail holds them.
    func withTerminatedLine<Result, Failure: Error>(
        _ body: (UnsafeBufferPointer<UInt8>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try storage.withUnsafeBufferPointer { (all: UnsafeBufferPointer<UInt8>) throws(Failure) -> Result in
            try body(UnsafeBufferPointer(rebasing: all[...length]))
        }
    }

    /// The buffer, handed over for the next writer (``init(reusing:)``); the writer is left empty.
    mutating func take() -> [UInt8] {
        var taken: [UInt8] = []
        swap(&taken, &storage)
        length = 0
        return taken
    }

    /// Renders the record's line (``LineCursor/record(sequence:time:previousHash:event:pieces:)``)
    /// and a newline after it, into a larger buffer when it does not fit.
    mutating func record(sequence: UInt64, time: Timestamp, previousHash: String, event: AuditEvent) {
        var pieces = AuditLinePieces.none
        record(sequence: sequence, time: time, previousHash: previousHash, event: event, pieces: &pieces)
    }

    /// Renders the record's line as ``record(sequence:time:previousHash:event:)`` does (the same
    /// bytes), copying the pieces `pieces` holds already rendered and keeping those it renders.
    mutating func record(
        sequence: UInt64, time: Timestamp, previousHash: String, event: AuditEvent, pieces: inout AuditLinePieces
    ) {
        while true {
            let (rendered, needed) = storage.withUnsafeMutableBufferPointer { buffer -> (Int?, Int) in
                // One byte kept for the newline.
                var cursor = LineCursor(base: buffer.baseAddress!, capacity: buffer.count - 1)
                cursor.record(sequence: sequence, time: time, previousHash: previousHash, event: event, pieces: &pieces)
                guard !cursor.overflowed else { return (nil, cursor.needed) }
                buffer[cursor.count] = 10
                return (cursor.count, cursor.needed)
            }
            if let rendered {
                length = rendered
                return
            }
            // The pass that did not fit measured the whole line: one more pass renders it (a
            // `list` of 10,000 items names them all in one record, about a megabyte).
            storage = [UInt8](repeating: 0, count: max(storage.count * 2, needed + 1))
        }
    }

    /// The evaluator's reasons, rendered (quoted and escaped), beside the reason they render:
    /// a process's decisions give the same few reasons again and again, so each is rendered
    /// once. A list compared with `==`, not a dictionary: a `DecisionReason`-keyed dictionary's
    /// storage asks the runtime for `DecisionReason: Hashable` the first time, a scan of every
    /// conformance record in the executable, in every short process.
    /// Bounded: when full, it starts again empty.
    fileprivate static let renderedReasons = Mutex<[RenderedReason]>([])
    fileprivate static let renderedReasonLimit = 32

    /// One reason and its rendered text.
    struct RenderedReason {
        let reason: DecisionReason
        let text: [UInt8]
    }
}

/// Pieces of a line a sink renders once and copies into each line after (a group-commit
/// sink keeps them with its state): the same bytes as rendering them each time, since each is
/// used only for the very values it was rendered from.
struct AuditLinePieces {
    /// Whether pieces are kept at all (``none``: a line rendered once keeps nothing).
    fileprivate let keeps: Bool
    /// The values ``process`` was rendered from, when it was.
    fileprivate var processID: Int32 = 0
    fileprivate var userID: UInt32 = 0
    fileprivate var executable: String?
    /// `, "pid": …, "uid": …[, "exe": …]`, rendered for the values above; empty before.
    fileprivate var process: [UInt8] = []
    /// The status ``statusText`` was rendered for, when it was.
    fileprivate var status: KeygateStatus?
    /// `"status": …, "statusName": …` for ``status``; empty before.
    fileprivate var statusText: [UInt8] = []
    /// The evaluator's reasons this sink rendered, as ``AuditLineWriter/renderedReasons``
    /// keeps them for the process, at most ``reasonLimit`` (then it starts again empty).
    fileprivate var reasons: [AuditLineWriter.RenderedReason] = []
    fileprivate static let reasonLimit = 16
    /// When set, the line's `prev` is this digest's hex, rendered straight into the line (the
    /// `previousHash` text is then not read): the tip a sink keeps as bytes between appends.
    var previousDigest: SHA256Digest?

    /// Pieces that are kept, for a sink that renders line after line.
    init() { keeps = true }

    private init(keeping: Bool) { keeps = keeping }

    /// Nothing kept: each line rendered whole.
    static var none: AuditLinePieces { AuditLinePieces(keeping: false) }
}

extension LineCursor {
    /// The record's line, every piece rendered (``record(sequence:time:previousHash:event:pieces:)``
    /// keeping nothing).
    mutating func record(sequence: UInt64, time: Timestamp, previousHash: String, event: AuditEvent) {
        var pieces = AuditLinePieces.none
        record(sequence: sequence, time: time, previousHash: previousHash, event: event, pieces: &pieces)
    }

    /// `{"seq": …, "time": …, "op": …, <decision>, ["more": […],] "pamService": …, "pid": …,
    /// "uid": …, ["exe": …,] ["caller": {…},] "prev": …}`; the process's fields, the status and
    /// `prev` copied from `pieces` when it holds them rendered.
    mutating func record(
        sequence: UInt64, time: Timestamp, previousHash: String, event: AuditEvent, pieces: inout AuditLinePieces
    ) {
        raw("{\"seq\": ")
        number(sequence)
        raw(", \"time\": ")
        number(time.nanoseconds)
        raw(", \"op\": \"")
        raw(event.kind.text)
        raw("\", ")
        decision(event, pieces: &pieces)
        if !event.more.isEmpty {
            raw(", \"more\": [")
            for (index, entry) in event.more.enumerated() {
                if index > 0 { raw(", ") }
                raw("{")
                decision(entry, pieces: &pieces)
                raw("}")
            }
            raw("]")
        }
        raw(", \"pamService\": ")
        optional(event.pamService)
        process(event, pieces: &pieces)
        if let caller = event.caller {
            raw(", \"caller\": {\"uid\": ")
            number(caller.userID)
            raw(", \"pid\": ")
            number(caller.processID)
            raw(", \"exe\": ")
            optional(caller.executable)
            raw(", \"session\": ")
            optional(caller.session)
            raw("}")
        }
        raw(", \"prev\": ")
        if let digest = pieces.previousDigest {
            write(UInt8(ascii: "\""))
            write(hexOf: digest)
            write(UInt8(ascii: "\""))
        } else {
            string(previousHash)
        }
        raw("}")
    }

    /// `, "pid": …, "uid": …[, "exe": …]`, copied when `pieces` holds it for these values.
    private mutating func process(_ event: AuditEvent, pieces: inout AuditLinePieces) {
        let processID = event.processID
        let userID = event.userID
        let executable = event.executable
        if pieces.keeps, !pieces.process.isEmpty, pieces.processID == processID, pieces.userID == userID,
            pieces.executable == executable
        {
            pieces.process.withUnsafeBufferPointer { write($0) }
            return
        }
        let start = count
        raw(", \"pid\": ")
        number(processID)
        raw(", \"uid\": ")
        number(userID)
        if let executable {
            raw(", \"exe\": ")
            string(executable)
        }
        guard pieces.keeps, let rendered = written(from: start) else { return }
        pieces.processID = processID
        pieces.userID = userID
        pieces.executable = executable
        pieces.process = Array(rendered)
    }

    /// One item's decision: `["item": {…},] "accessControl": …, "rules": […], "decision": …,
    /// "status": …, "statusName": …, "reasons": […], "factors": […]`.
    mutating func decision(_ event: AuditEvent, pieces: inout AuditLinePieces) {
        if let item = event.item {
            raw("\"item\": {\"service\": ")
            string(item.service)
            raw(", \"account\": ")
            string(item.account)
            raw(", \"accessGroup\": ")
            string(item.accessGroup)
            if item.synchronizable { raw(", \"synchronizable\": true") }
            raw("}, ")
        }
        raw("\"accessControl\": ")
        optional(event.accessControlText)
        raw(", \"rules\": ")
        strings(event.ruleIDs)
        raw(", \"decision\": \"")
        raw(event.decision.text)
        raw("\", ")
        status(event.status, pieces: &pieces)
        raw(", \"reasons\": [")
        for (index, reason) in event.reasons.enumerated() {
            if index > 0 { raw(", ") }
            reasonText(reason, pieces: &pieces)
        }
        for (index, note) in event.notes.enumerated() {
            if index > 0 || !event.reasons.isEmpty { raw(", ") }
            string(note.description)
        }
        raw("]")
        raw(", \"factors\": [")
        for (index, factor) in event.factors.enumerated() {
            if index > 0 { raw(", ") }
            raw("{\"factor\": \"")
            raw(factor.factor.auditText)
            raw("\", \"secondsAgo\": ")
            number(factor.secondsAgo)
            raw("}")
        }
        raw("]")
    }

    /// `"status": …, "statusName": …`, copied when `pieces` holds it for `status` (a sink's
    /// decisions carry the same few statuses; the name is a table lookup).
    private mutating func status(_ status: KeygateStatus?, pieces: inout AuditLinePieces) {
        guard let status else {
            raw("\"status\": null, \"statusName\": null")
            return
        }
        if pieces.keeps, !pieces.statusText.isEmpty, pieces.status == status {
            pieces.statusText.withUnsafeBufferPointer { write($0) }
            return
        }
        let start = count
        raw("\"status\": ")
        number(status.rawValue)
        raw(", \"statusName\": ")
        optional(status.name)
        guard pieces.keeps, let rendered = written(from: start) else { return }
        pieces.status = status
        pieces.statusText = Array(rendered)
    }

    /// `reason`'s text as a JSON string, the same bytes as ``string(_:)`` of its description,
    /// each reason rendered once (``AuditLineWriter/renderedReasons``); a sink's own pieces
    /// (``AuditLinePieces/reasons``) looked at first, with no lock taken.
    private mutating func reasonText(_ reason: DecisionReason, pieces: inout AuditLinePieces) {
        if pieces.keeps {
            for entry in pieces.reasons where entry.reason == reason {
                entry.text.withUnsafeBufferPointer { write($0) }
                return
            }
        }
        let text = Self.renderedReason(reason)
        text.withUnsafeBufferPointer { write($0) }
        guard pieces.keeps else { return }
        if pieces.reasons.count >= AuditLinePieces.reasonLimit { pieces.reasons.removeAll(keepingCapacity: true) }
        pieces.reasons.append(AuditLineWriter.RenderedReason(reason: reason, text: text))
    }

    /// `reason`'s rendered text, from the process's cache or rendered (and cached) now.
    private static func renderedReason(_ reason: DecisionReason) -> [UInt8] {
        let found = AuditLineWriter.renderedReasons.withLock { cache -> [UInt8]? in
            for entry in cache where entry.reason == reason { return entry.text }
            return nil
        }
        if let found { return found }
        var text: [UInt8] = [UInt8(ascii: "\"")]
        text.appendJSONEscaped(reason.description)
        text.append(UInt8(ascii: "\""))
        let rendered = AuditLineWriter.RenderedReason(reason: reason, text: text)
        AuditLineWriter.renderedReasons.withLock { cache in
            if cache.count >= AuditLineWriter.renderedReasonLimit { cache.removeAll(keepingCapacity: true) }
            cache.append(rendered)
        }
        return text
    }

    @inline(__always) private mutating func raw(_ text: StaticString) { write(text) }

    /// Decimal digits written straight into the line (no `String` made for them).
    @inline(__always) private mutating func number(_ value: some BinaryInteger) { writeDecimal(value) }

    private mutating func optional(_ text: String?) {
        if let text { string(text) } else { raw("null") }
    }

    private mutating func strings(_ texts: [String]) {
        raw("[")
        for (index, text) in texts.enumerated() {
            if index > 0 { raw(", ") }
            string(text)
        }
        raw("]")
    }

    private mutating func string(_ text: String) {
        write(UInt8(ascii: "\""))
        JSONEscaping.write(text, asciiOnly: false, to: &self)
        write(UInt8(ascii: "\""))
    }
}
