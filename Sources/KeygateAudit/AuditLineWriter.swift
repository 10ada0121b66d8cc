import KeygatePolicy
import Synchronization

/// Renders a record's JSON line straight into bytes, once: the one place an audit event
/// becomes text. Keys in a fixed order, `", "` and `": "` between members, strings escaped as
/// RFC 8259 asks (quote, backslash, control characters), everything else verbatim UTF-8.
struct AuditLineWriter {
    private(set) var bytes: [UInt8] = []

    /// A writer with room for a usual record (an item decision's line runs to about 520 bytes:
    /// one allocation, not a second to grow it).
    init() { bytes.reserveCapacity(1024) }

    /// A writer that renders into `buffer`, emptied but keeping its capacity: a sink's buffer
    /// used again line after line (no allocation once it is large enough).
    init(reusing buffer: consuming [UInt8]) {
        bytes = buffer
        bytes.removeAll(keepingCapacity: true)
        if bytes.capacity < 1024 { bytes.reserveCapacity(1024) }
    }

    /// Ends the rendered line with its newline, as a trail holds it (after it was hashed: the
    /// hash is the line's without the newline).
    mutating func endLine() { bytes.append(10) }

    /// The rendered bytes, handed over (the writer is left empty).
    mutating func take() -> [UInt8] {
        var taken: [UInt8] = []
        swap(&taken, &bytes)
        return taken
    }

    /// `{"seq": …, "time": …, "op": …, <decision>, ["more": […],] "pamService": …, "pid": …,
    /// "uid": …, ["exe": …,] ["caller": {…},] "prev": …}`.
    mutating func record(sequence: UInt64, time: Timestamp, previousHash: String, event: AuditEvent) {
        raw("{\"seq\": ")
        number(sequence)
        raw(", \"time\": ")
        number(time.nanoseconds)
        raw(", \"op\": ")
        string(event.kind.rawValue)
        raw(", ")
        decision(event)
        if !event.more.isEmpty {
            raw(", \"more\": [")
            for (index, entry) in event.more.enumerated() {
                if index > 0 { raw(", ") }
                raw("{")
                decision(entry)
                raw("}")
            }
            raw("]")
        }
        raw(", \"pamService\": ")
        optional(event.pamService)
        raw(", \"pid\": ")
        number(event.processID)
        raw(", \"uid\": ")
        number(event.userID)
        if let executable = event.executable {
            raw(", \"exe\": ")
            string(executable)
        }
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
        string(previousHash)
        raw("}")
    }

    /// One item's decision: `["item": {…},] "accessControl": …, "rules": […], "decision": …,
    /// "status": …, "statusName": …, "reasons": […], "factors": […]`.
    mutating func decision(_ event: AuditEvent) {
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
        optional(event.accessControl)
        raw(", \"rules\": ")
        strings(event.ruleIDs)
        raw(", \"decision\": ")
        string(event.decision.rawValue)
        raw(", \"status\": ")
        if let status = event.status { number(status.rawValue) } else { raw("null") }
        raw(", \"statusName\": ")
        optional(event.status?.name)
        raw(", \"reasons\": [")
        for (index, reason) in event.reasons.enumerated() {
            if index > 0 { raw(", ") }
            reasonText(reason)
        }
        for (index, note) in event.notes.enumerated() {
            if index > 0 || !event.reasons.isEmpty { raw(", ") }
            string(note.description)
        }
        raw("]")
        raw(", \"factors\": [")
        for (index, factor) in event.factors.enumerated() {
            if index > 0 { raw(", ") }
            raw("{\"factor\": ")
            string(factor.factor.rawValue)
            raw(", \"secondsAgo\": ")
            number(factor.secondsAgo)
            raw("}")
        }
        raw("]")
    }

    /// The evaluator's reasons, rendered (quoted and escaped), beside the reason they render:
    /// a process's decisions give the same few reasons again and again, so each is rendered
    /// once. A list compared with `==`, not a dictionary: a `DecisionReason`-keyed dictionary's
    /// storage asks the runtime for `DecisionReason: Hashable` the first time, a scan of every
    /// conformance record in the executable (about 0.2 M instructions in each `keygate get`).
    /// Bounded: when full, it starts again empty.
    private static let renderedReasons = Mutex<[RenderedReason]>([])
    private static let renderedReasonLimit = 32

    /// One reason and its rendered text.
    private struct RenderedReason {
        let reason: DecisionReason
        let text: [UInt8]
    }

    /// `reason`'s text as a JSON string, the same bytes as ``string(_:)`` of its description.
    private mutating func reasonText(_ reason: DecisionReason) {
        let cached = Self.renderedReasons.withLock { cache -> [UInt8]? in
            for entry in cache where entry.reason == reason { return entry.text }
            return nil
        }
        if let cached {
            bytes += cached
            return
        }
        let start = bytes.count
        string(reason.description)
        let rendered = RenderedReason(reason: reason, text: Array(bytes[start...]))
        Self.renderedReasons.withLock { cache in
            if cache.count >= Self.renderedReasonLimit { cache.removeAll(keepingCapacity: true) }
            cache.append(rendered)
        }
    }

    private mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Decimal digits written straight into the line (no `String` made for them).
    private mutating func number(_ value: some BinaryInteger) { bytes.appendDecimal(value) }

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
        bytes.append(UInt8(ascii: "\""))
        bytes.appendJSONEscaped(text)
        bytes.append(UInt8(ascii: "\""))
    }
}
