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
}

/// Keeps records in memory (tests; see KeygateTesting's `AuditRecorder`).
///
/// Each append seals its record into the chain (so ``head`` and the returned record are
/// always current) and keeps what the record was sealed from, the event and its time, rather
/// than the record's rendered line and hashes: sealing is deterministic, so ``records`` seals
/// them again from the genesis, once each, when first asked for (a third of the memory per
/// record, which matters for a sink that keeps everything).
public final class InMemoryAuditSink: AuditSink {
    private struct State {
        var head: AuditHead
        /// What each record was sealed from, in order.
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
            let record = state.head.seal(event, at: time)
            state.sealed.append((event, time))
            return record
        }
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
    public var head: AuditHead { state.withLock { $0.head } }
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
