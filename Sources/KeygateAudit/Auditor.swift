import Glibc
public import KeygatePolicy
import Synchronization

/// Writes audit events for the engine: fills in who decided (and, for a broker, who asked), redacts account names when
/// configured, and enforces the failure policy.
///
/// When ``isRequired`` (the CLI's default), a record that cannot be written makes the
/// decision it describes a denial: ``record(_:)`` throws `errSecIO`, and the caller must not
/// go ahead. Otherwise the failure is ignored.
public struct Auditor: Sendable {
    /// Where records go.
    public let sink: any AuditSink
    /// Whether a decision whose record cannot be written is denied.
    public let isRequired: Bool
    /// When set, account names are replaced by `hmac-sha256:<hex>` under this key, as Vault
    /// does, for trails shipped off the host.
    public let redactionKey: [UInt8]?
    /// The process recorded in every event.
    public let processID: Int32
    /// The user recorded in every event.
    public let userID: UInt32
    /// The executable recorded in every event, when given.
    public let executable: String?
    /// Who asked, recorded in every event (`caller`), when this auditor decides for another
    /// process (a broker's connection); nil in embedded mode.
    public let caller: AuditCaller?
    /// Where record times come from.
    public let clock: any KeygateClock
    /// Tells this auditor (and its copies) from others, for ``collecting(_:)``.
    private let token = AuditCall.Token()
    /// Whether the sink is a file sink that may hold a call's records
    /// (``JSONLinesAuditSink/mayHoldRecords``), found once, by its type: no cast per record.
    private let sinkMayHoldRecords: Bool
    /// Auditing is off (``NoopAuditSink``), found once, by the sink's type: a metatype
    /// comparison rather than `sink is NoopAuditSink` (a failing dynamic cast makes the runtime
    /// scan every protocol conformance in the program, twice, before it answers), and not one
    /// per record or call (each reads the existential's dynamic type).
    private let discards: Bool

    /// An auditor.
    /// - Parameters:
    ///   - sink: where records go.
    ///   - isRequired: whether a decision whose record cannot be written is denied.
    ///   - redactionKey: when set, account names are replaced by their HMAC under this key.
    ///   - processID: the pid recorded; nil (the default) records this process's.
    ///   - userID: the uid recorded; nil (the default) records this process's effective uid.
    ///   - executable: the program recorded in every event (`exe`), when given.
    ///   - clock: where record times come from.
    ///   - caller: who asked, recorded in every event, when this auditor decides for another process.
    public init(
        sink: any AuditSink, isRequired: Bool = true, redactionKey: [UInt8]? = nil, processID: Int32? = nil,
        userID: UInt32? = nil, executable: String? = nil, clock: any KeygateClock = SystemClock(),
        caller: AuditCaller? = nil
    ) {
        self.sink = sink
        self.isRequired = isRequired
        self.redactionKey = redactionKey
        // The engine's only libc calls: who this process is, for records that say who asked.
        self.processID = processID ?? getpid()
        self.userID = userID ?? geteuid()
        self.executable = executable
        self.clock = clock
        self.caller = caller
        // A cast from the existential to the class itself, tried only when the type is that class:
        // never `sink as AnyObject`, which boxes it for Objective-C bridging and looks Foundation's
        // `__SwiftValue` up by name at its first use, in every process.
        let fileSink = type(of: sink) == JSONLinesAuditSink.self ? sink as? JSONLinesAuditSink : nil
        sinkMayHoldRecords = fileSink?.mayHoldRecords ?? false
        discards = type(of: sink) == NoopAuditSink.self
    }

    /// Records `event`.
    ///
    /// Inside ``collecting(_:)``, an item decision (add, read, update, delete) is kept until
    /// the call ends, or until an event of another kind (an authentication attempt, say) must
    /// be written first: the decisions of one call go into one record.
    /// - Throws: `errSecIO` naming the problem when the record cannot be written and auditing is required.
    public func record(_ event: consuming AuditEvent) throws(KeygateError) {
        // Auditing off: nothing to seal, render or hash.
        if discards { return }
        // Filled in where it is (a consuming parameter is the caller's value, moved in): not
        // copied out and back.
        prepare(&event)
        if let call = AuditCall.current, call.owner == identity {
            if Self.isCollected(event.kind) {
                // Moved into the call's pending decisions, not copied.
                var moving: AuditEvent? = consume event
                call.pending.withLock { $0.append(moving.take()!) }
                return
            }
            try flush(call)
            try write(event, in: call)
            return
        }
        try write(event, in: nil)
    }

    /// Runs `body` (one facade call), collecting its item decisions into as few records as
    /// possible (one, unless an authentication attempt or another kind of event comes between
    /// them), written before the call returns or throws. A value is returned only once its
    /// decision's record is written and durable: when it cannot be (and auditing is required)
    /// the call fails with the audit error instead.
    ///
    /// Records written in the call may be held rather than flushed at once (a
    /// ``JSONLinesAuditSink`` under ``JSONLinesAuditSink/Durability/eachRecord`` whose anchor
    /// store holds records, ``AuditAnchorStore/holdsAuditRecords``): the store's item
    /// transaction commits them with the item. Before the call returns or throws the sink
    /// settles (``JSONLinesAuditSink/settle()``): what no transaction committed is `fsync`ed
    /// then, so an item write costs one flush, and a read still one.
    ///
    /// Inlined, so each caller's `Value` is known where it is compiled: the collecting itself
    /// (`collectingCall(_:)`) returns nothing, and no `Result<Value, …>` metadata is looked
    /// up at run time per call.
    @inlinable
    public func collecting<Value>(_ body: () async throws(KeygateError) -> Value) async throws(KeygateError) -> Value {
        var value: Value?
        try await collectingCall { () async throws(KeygateError) in value = try await body() }
        // Set: the call returned, so `body` did.
        return value!
    }

    /// ``collecting(_:)`` for a body that returns nothing (the value, if any, is kept by the
    /// caller): the facade's calls use it directly, one closure fewer to run.
    @usableFromInline
    package func collectingCall(_ body: () async throws(KeygateError) -> Void) async throws(KeygateError) {
        if discards || AuditCall.current?.owner == identity {
            return try await body()
        }
        let call = AuditCall(owner: identity)
        let result: Result<Void, KeygateError> = await AuditCall.$current.withValue(call) {
            do throws(KeygateError) {
                try await body()
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        var failure: KeygateError?
        do { try flush(call) } catch { failure = error }
        // Only a sink that may hold records is ever told of this call (``holdingCall(_:)``):
        // for any other, nothing is held and there is nothing to settle.
        if sinkMayHoldRecords {
            do { try settle(call) } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
        try result.get()
    }

    /// Writes the decisions collected so far in this call (``collecting(_:)``): before the
    /// caller acts on them (removes, replaces or inserts items), so nothing changes without a
    /// record of it. Outside a collecting call there is nothing to write.
    /// - Throws: `errSecIO` naming the problem when a record cannot be written and auditing is required.
    public func commit() throws(KeygateError) {
        guard let call = AuditCall.current, call.owner == identity else { return }
        try flush(call)
    }

    /// Whether ``collecting(_:)`` gathers events of `kind` into one record (a switch, not a
    /// `Set`: a process's first `Set<AuditEvent.Kind>` makes the runtime scan every protocol
    /// conformance in the program for `Hashable`, part of `keygate get`'s start-up).
    private static func isCollected(_ kind: AuditEvent.Kind) -> Bool {
        switch kind {
        case .add, .read, .update, .delete: true
        default: false
        }
    }

    /// Makes the records held in `call` durable (``JSONLinesAuditSink/settle()``), enforcing
    /// the failure policy.
    private func settle(_ call: AuditCall) throws(KeygateError) {
        let sinks = call.held.withLock { held in
            defer { held = [] }
            return held
        }
        var failure: KeygateError?
        for sink in sinks {
            do { try sink.settle() } catch { failure = failure ?? error }
        }
        guard let failure, isRequired else { return }
        throw KeygateError(.io, "the audit record could not be written: \(failure.message)")
    }

    /// Writes what `call` has collected: runs of decisions of one kind, one record each
    /// (``AuditCall/Pending`` groups them as they come).
    private func flush(_ call: AuditCall) throws(KeygateError) {
        var taken = AuditCall.Pending()
        call.pending.withLock { swap(&$0, &taken) }
        // The usual call decides one item: one record, nothing to group (and no array made).
        guard let first = taken.first.take() else { return }
        if taken.rest.isEmpty {
            try write(first, in: call)
            return
        }
        // One sink call for the call's records: the file sink writes and flushes them together.
        try write([first] + taken.rest, in: call)
    }

    /// Which auditor (this one or a copy of it) a collecting call belongs to.
    private var identity: ObjectIdentifier { ObjectIdentifier(token) }

    /// Fills in who decided and who asked, and redacts the account when configured (never the caller).
    private func prepare(_ event: inout AuditEvent) {
        event.processID = processID
        event.userID = userID
        // Set only when either side has one: nil over nil is no change, and the assignment
        // would still destroy and copy each optional through its value witnesses.
        if executable != nil || event.executable != nil { event.executable = executable }
        if caller != nil || event.caller != nil { event.caller = caller }
        if let key = redactionKey { event = event.redacted(under: key) }
    }

    /// `call`, when the sink may hold its records until it settles
    /// (``JSONLinesAuditSink/mayHoldRecords``); nil otherwise, so no task-local value is set
    /// around a write to a sink that never reads it.
    private func holdingCall(_ call: AuditCall?) -> AuditCall? {
        sinkMayHoldRecords ? call : nil
    }

    /// Seals and stores `events` together, enforcing the failure policy; inside `call`, a sink
    /// that can may hold them until the call settles.
    private func write(_ events: [AuditEvent], in call: AuditCall?) throws(KeygateError) {
        do {
            try AuditCall.holding(for: holdingCall(call)) { () throws(KeygateError) in
                try sink.append(contentsOf: events, at: clock.now())
            }
        } catch {
            guard isRequired else { return }
            throw KeygateError(
                .io,
                "the audit record could not be written, so the \(events[0].kind.rawValue) was denied: \(error.message)")
        }
    }

    /// Seals and stores `event`, enforcing the failure policy; inside `call`, a sink that can
    /// may hold it until the call settles.
    private func write(_ event: AuditEvent, in call: AuditCall?) throws(KeygateError) {
        do {
            // No record is made for nothing (``AuditSink/store(_:at:)``): the in-memory sink
            // seals when its trail is looked at, the file sink writes the bytes it rendered.
            try AuditCall.holding(for: holdingCall(call)) { () throws(KeygateError) in
                try sink.store(event, at: clock.now())
            }
        } catch {
            guard isRequired else { return }
            throw KeygateError(
                .io, "the audit record could not be written, so the \(event.kind.rawValue) was denied: \(error.message)"
            )
        }
    }
}

/// The decisions one facade call has made and not yet written (``Auditor/collecting(_:)``).
final class AuditCall: Sendable {
    /// The call being collected for, in this task and its children.
    @TaskLocal static var current: AuditCall?

    /// The call whose auditor is writing its records now: a sink that can holds them until
    /// the call settles (``JSONLinesAuditSink/settle()``). Set only around the owner's own
    /// writes, so another auditor's records in the same task are never held for this call.
    @TaskLocal static var holding: AuditCall?

    /// The auditor's sink, so that another auditor's events are never collected here.
    let owner: ObjectIdentifier
    /// Decisions waiting to be written, in order.
    let pending = Mutex(Pending())
    /// The sinks holding records of this call, to settle before it returns.
    let held = Mutex<[JSONLinesAuditSink]>([])

    /// Runs `body` with ``holding`` set to `call` (unchanged when nil).
    static func holding(for call: AuditCall?, _ body: () throws(KeygateError) -> Void) throws(KeygateError) {
        guard let call else { return try body() }
        let result: Result<Void, KeygateError> = $holding.withValue(call) {
            do throws(KeygateError) {
                try body()
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    /// Remembers that `sink` holds records of this call.
    func hold(_ sink: JSONLinesAuditSink) {
        held.withLock { held in
            if !held.contains(where: { $0 === sink }) { held.append(sink) }
        }
    }

    /// The records collected so far, in order, each a run of decisions of one kind (the
    /// first decision with the rest in its ``AuditEvent/more``), grouped as the decisions come:
    /// a call that decides many items (a list of hundreds of thousands) holds a few thousand
    /// records, never an array of every decision to be grouped later. The first record is held
    /// inline, so the usual call (one item, one event) allocates no array for it.
    struct Pending: Sendable {
        var first: AuditEvent?
        var rest: [AuditEvent] = []
        /// About how long the last record's line is (``AuditEvent/estimatedLength``), once a
        /// second decision came (the usual call never works it out).
        private var lastLength: Int?

        mutating func append(_ event: consuming AuditEvent) {
            // No copy of a record is held while its `more` grows (that would copy the array).
            guard first != nil else {
                first = event
                return
            }
            let length = event.estimatedLength
            if rest.isEmpty {
                let total = (lastLength ?? first!.estimatedLength) + length
                if first!.kind == event.kind, Self.fits(total) {
                    first!.more.append(event)
                    lastLength = total
                    return
                }
            } else if rest[rest.count - 1].kind == event.kind, let last = lastLength, Self.fits(last + length) {
                rest[rest.count - 1].more.append(event)
                lastLength = last + length
                return
            }
            rest.append(event)
            lastLength = length
        }

        /// A record stays well under the longest line a trail may hold: a call that decided
        /// many items writes a few records rather than one too long to write.
        private static func fits(_ length: Int) -> Bool {
            length <= AuditRecord.maximumLineLength / 4
        }
    }

    init(owner: ObjectIdentifier) { self.owner = owner }

    /// An auditor's identity.
    final class Token: Sendable {}
}

extension AuditEvent {
    /// About how many bytes this decision adds to a record's line (generous: escaping can
    /// only double the text, the fixed fields take under 256 bytes, and an evaluator's reason under 160).
    var estimatedLength: Int {
        let item = self.item.map { $0.service.utf8.count + $0.account.utf8.count + $0.accessGroup.utf8.count } ?? 0
        let texts =
            (accessControl?.utf8.count ?? 0) + 160 * reasons.count
            + notes.reduce(0) { $0 + $1.description.utf8.count + 4 }
            + ruleIDs.reduce(0) { $0 + $1.utf8.count + 4 }
        return 256 + 2 * (item + texts) + 48 * factors.count
    }
}
