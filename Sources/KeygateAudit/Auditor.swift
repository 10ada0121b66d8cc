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
    /// The facade call this auditor collects for (``collecting(_:)``), nil outside one: its
    /// item decisions are kept until the call ends, and its records may be held for the call's
    /// item write. Hand it to that write (`ItemStore.insert(_:joining:)`, …).
    public private(set) var call: AuditCall?
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
        discards = type(of: sink) == NoopAuditSink.self
    }

    /// Records `event`.
    ///
    /// For an auditor of a call (``collecting(_:)``), an item decision (add, read, update,
    /// delete) is kept until the call ends, or until an event of another kind (an authentication
    /// attempt, say) must be written first: the decisions of one call go into one record.
    /// - Throws: `errSecIO` naming the problem when the record cannot be written and auditing is required.
    public func record(_ event: consuming AuditEvent) throws(KeygateError) {
        // Auditing off: nothing to seal, render or hash.
        if discards { return }
        // Filled in where it is (a consuming parameter is the caller's value, moved in): not
        // copied out and back.
        prepare(&event)
        if let call {
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

    /// Runs `body` (one facade call) with an auditor of that call (``call`` set), collecting
    /// its item decisions into as few records as possible (one, unless an authentication
    /// attempt or another kind of event comes between them), written before the call returns or
    /// throws. A value is returned only once its decision's record is written and durable: when
    /// it cannot be (and auditing is required) the call fails with the audit error instead. An
    /// auditor that is already a call's runs `body` with itself: the outer call collects.
    ///
    /// Records written in the call may be held rather than flushed at once (a
    /// ``JSONLinesAuditSink`` under ``JSONLinesAuditSink/Durability/eachRecord`` whose anchor is
    /// kept in an item store): the call's item write, handed ``call``, commits them with the
    /// item. Before the call returns or throws each such sink settles
    /// (``JSONLinesAuditSink/settle()``): what no write committed is `fdatasync`ed then, so an
    /// item write costs one flush, and a read still one.
    ///
    /// Inlined, so each caller's `Value` is known where it is compiled: the collecting itself
    /// (`collectingCall(_:)`) returns nothing, and no `Result<Value, …>` metadata is looked
    /// up at run time per call.
    @inlinable
    public func collecting<Value>(_ body: (Auditor) async throws(KeygateError) -> Value) async throws(KeygateError)
        -> Value
    {
        var value: Value?
        try await collectingCall { (auditor) async throws(KeygateError) in value = try await body(auditor) }
        // Set: the call returned, so `body` did.
        return value!
    }

    /// ``collecting(_:)`` for a body that returns nothing (the value, if any, is kept by the
    /// caller): the facade's calls use it directly, one closure fewer to run.
    @usableFromInline
    package func collectingCall(_ body: (Auditor) async throws(KeygateError) -> Void) async throws(KeygateError) {
        if discards || call != nil {
            return try await body(self)
        }
        let call = AuditCall()
        var auditor = self
        auditor.call = call
        var failure: KeygateError?
        do throws(KeygateError) {
            try await body(auditor)
        } catch {
            failure = error
        }
        var written: KeygateError?
        do { try flush(call) } catch { written = error }
        do { try settle(call) } catch { written = written ?? error }
        if let written { throw written }
        if let failure { throw failure }
    }

    /// Writes the decisions collected so far in this call (``collecting(_:)``): before the
    /// caller acts on them (removes, replaces or inserts items), so nothing changes without a
    /// record of it. Outside a call there is nothing to write.
    /// - Throws: `errSecIO` naming the problem when a record cannot be written and auditing is required.
    public func commit() throws(KeygateError) {
        guard let call else { return }
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

    /// Makes the records held for `call` durable (``JSONLinesAuditSink/settle()``), enforcing
    /// the failure policy.
    private func settle(_ call: AuditCall) throws(KeygateError) {
        var failure: KeygateError?
        for sink in call.takeHolding() {
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

    /// Seals and stores `events` together, enforcing the failure policy; inside `call`, a sink
    /// that can may hold them until the call settles.
    private func write(_ events: [AuditEvent], in call: AuditCall?) throws(KeygateError) {
        do {
            try sink.store(contentsOf: events, at: clock.now(), in: call)
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
            // No record is made for nothing (``AuditSink/store(_:at:in:)``): the in-memory sink
            // seals when its trail is looked at, the file sink writes the bytes it rendered.
            try sink.store(event, at: clock.now(), in: call)
        } catch {
            guard isRequired else { return }
            throw KeygateError(
                .io, "the audit record could not be written, so the \(event.kind.rawValue) was denied: \(error.message)"
            )
        }
    }
}
