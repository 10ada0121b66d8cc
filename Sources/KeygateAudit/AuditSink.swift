public import KeygatePolicy
import Synchronization

/// Where audit records go: an in-memory list, a JSON Lines file, standard error.
///
/// Duties: seal each event into the trail's hash chain (``AuditHead/seal(_:at:)``) and store
/// it before returning; throw a ``KeygatePolicy/KeygateError`` when it cannot be stored as durably as
/// configured (the ``Auditor`` then denies the decision when auditing is required); never
/// drop, reorder or rewrite records; never hold a secret.
public protocol AuditSink: Sendable {
    /// Seals `event` at `time` as the next record and stores it.
    @discardableResult
    func append(_ event: AuditEvent, at time: Timestamp) throws(KeygateError) -> AuditRecord

    /// Seals `events` at `time` as the next records, in order, and stores them: the records of
    /// one call (a `list` of many items writes several). A sink that can stores them together
    /// (the file sink: one write and one flush); the default appends them one by one.
    @discardableResult
    func append(contentsOf events: [AuditEvent], at time: Timestamp) throws(KeygateError) -> [AuditRecord]

    /// Seals `event` at `time` as the next record and stores it, with the same duties and the
    /// same trail as ``append(_:at:)``, but returns nothing: what the ``Auditor`` calls, which
    /// never looks at the record (a sink may then skip making it: the file sink writes the
    /// line from the bytes it rendered). Inside a facade's `call`, a sink that can may hold the
    /// record for the call's item write instead of flushing it now (``AuditCall``), provided it
    /// is durable by the time the call settles. The default appends it.
    func store(_ event: AuditEvent, at time: Timestamp, in call: AuditCall?) throws(KeygateError)

    /// Seals `events` at `time` as the next records and stores them, as
    /// ``append(contentsOf:at:)`` does, returning nothing; inside `call` as
    /// ``store(_:at:in:)``. The default appends them.
    func store(contentsOf events: [AuditEvent], at time: Timestamp, in call: AuditCall?) throws(KeygateError)
}

extension AuditSink {
    /// Appends `events` one by one, stopping at the first that cannot be stored.
    @discardableResult
    public func append(contentsOf events: [AuditEvent], at time: Timestamp) throws(KeygateError) -> [AuditRecord] {
        var records: [AuditRecord] = []
        records.reserveCapacity(events.count)
        for event in events { records.append(try append(event, at: time)) }
        return records
    }

    /// Seals `event` at `time` as the next record and stores it outside any facade call
    /// (``store(_:at:in:)`` with no call): durable as the sink is configured before it returns.
    public func store(_ event: AuditEvent, at time: Timestamp) throws(KeygateError) {
        try store(event, at: time, in: nil)
    }

    /// Appends `event` and drops the record (nothing is held for `call`).
    public func store(_ event: AuditEvent, at time: Timestamp, in call: AuditCall?) throws(KeygateError) {
        _ = try append(event, at: time)
    }

    /// Appends `events` and drops the records (nothing is held for `call`).
    public func store(contentsOf events: [AuditEvent], at time: Timestamp, in call: AuditCall?) throws(KeygateError) {
        _ = try append(contentsOf: events, at: time)
    }
}

/// Keeps records in memory (tests; see KeygateTesting's `AuditRecorder`).
///
/// It keeps what each record is sealed from, the event and its time, rather than the record's
/// rendered line and hashes: sealing is deterministic, so ``records`` seals them from the
/// genesis, once each, when first asked for (a third of the memory per record, which matters
/// for a sink that keeps everything). ``append(_:at:)`` seals its record at once and returns
/// it; ``store(_:at:)`` (what the ``Auditor`` calls) only keeps the event, and ``head`` seals
/// what was stored so far when asked. Either way ``head`` and ``records`` are always current.
public final class InMemoryAuditSink: AuditSink {
    private struct State {
        /// The chain after the first `headCount` entries of `sealed`.
        var head: AuditHead
        var headCount = 0
        /// What each record was (or will be) sealed from, in order.
        var sealed: [(event: AuditEvent, time: Timestamp)] = []
        /// The records of the first `records.count` entries of `sealed`, sealed again.
        var records: [AuditRecord] = []
        /// The chain as far as `records` reach.
        var replayed: AuditHead
    }

    private let state: Mutex<State>

    /// An empty trail with a fixed genesis (in memory there is no one to forge it for).
    public init(genesis: String = String(repeating: "0", count: 64)) {
        state = Mutex(State(head: AuditHead(genesis: genesis), replayed: AuditHead(genesis: genesis)))
    }

    /// Seals and keeps the record.
    @discardableResult
    public func append(_ event: AuditEvent, at time: Timestamp) throws(KeygateError) -> AuditRecord {
        state.withLock { state in
            Self.catchUp(&state)
            let record = state.head.seal(event, at: time)
            state.sealed.append((event, time))
            state.headCount += 1
            return record
        }
    }

    /// Keeps `event` as the next record, as ``append(_:at:)`` does, without sealing it now: it
    /// is sealed when the trail is looked at (``head``, ``records``), into the record
    /// ``append(_:at:)`` would have returned. The ``Auditor``'s path, which never looks at the record.
    public func store(_ event: AuditEvent, at time: Timestamp, in call: AuditCall?) {
        state.withLock { $0.sealed.append((event, time)) }
    }

    /// Keeps `event` as the next record (``store(_:at:in:)`` outside a call); never fails.
    public func store(_ event: AuditEvent, at time: Timestamp) {
        store(event, at: time, in: nil)
    }

    /// Brings `head` over the entries stored since it was last current.
    private static func catchUp(_ state: inout State) {
        guard state.headCount < state.sealed.count else { return }
        if state.records.count == state.sealed.count, let last = state.records.last {
            state.head = AuditHead(genesis: state.head.genesis, sequence: last.sequence, hash: last.hash)
        } else {
            for (event, time) in state.sealed[state.headCount...] { _ = state.head.seal(event, at: time) }
        }
        state.headCount = state.sealed.count
    }

    /// Every record so far.
    public var records: [AuditRecord] {
        state.withLock { state in
            if state.records.count < state.sealed.count {
                state.records.reserveCapacity(state.sealed.count)
                for (event, time) in state.sealed[state.records.count...] {
                    state.records.append(state.replayed.seal(event, at: time))
                }
            }
            return state.records
        }
    }

    /// The head.
    public var head: AuditHead {
        state.withLock { state in
            Self.catchUp(&state)
            return state.head
        }
    }
}

/// Drops every record (auditing off).
public struct NoopAuditSink: AuditSink {
    /// Creates it.
    public init() {}

    /// Seals the event against an empty head and forgets it.
    public func append(_ event: AuditEvent, at time: Timestamp) throws(KeygateError) -> AuditRecord {
        var head = AuditHead(genesis: "")
        return head.seal(event, at: time)
    }
}

/// Sends every record to several sinks; fails when any of them fails.
public struct MultiplexAuditSink: AuditSink {
    /// The sinks, in order; the first one's record is returned.
    public let sinks: [any AuditSink]

    /// A multiplexer over `sinks` (at least one).
    public init(_ sinks: [any AuditSink]) {
        precondition(!sinks.isEmpty, "a multiplex sink needs at least one sink")
        self.sinks = sinks
    }

    /// Appends to every sink.
    public func append(_ event: AuditEvent, at time: Timestamp) throws(KeygateError) -> AuditRecord {
        var first: AuditRecord?
        var failure: KeygateError?
        for sink in sinks {
            do {
                let record = try sink.append(event, at: time)
                if first == nil { first = record }
            } catch {
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
        return first!
    }
}
