public import KeygateItems
import KeygatePolicy
import Synchronization

/// One facade call's audit: the decisions it made and has not yet written (``Auditor/collecting(_:)``
/// groups them into as few records as possible), and the file sinks its records went to.
///
/// It is also the call's ``KeygateItems/TransactionParticipant``: the facade hands it to the item
/// write the call makes (`ItemStore.insert(_:joining:)`, …), and each of those sinks whose
/// anchor is kept in that store (``AuditAnchorKeeper``) adds what it offers (records of this call
/// and earlier ones not yet flushed, with the head after them; an anchor; a release) to the
/// write's own commit. When the write commits, those records are durable with the item, and
/// settling the call (before it returns) costs no flush; when nothing committed them (a read, a
/// refusal, a failed write), settling flushes the trail instead.
///
/// Made by ``Auditor/collecting(_:)`` and handed along the call (``Auditor/call``), never kept
/// in a task-local or global: a record is held for the call whose auditor wrote it, and only
/// that call's write can commit it.
public final class AuditCall: TransactionParticipant {
    /// Decisions waiting to be written, in order.
    let pending = Mutex(Pending())
    /// The file sinks this call's records went to, and those of them holding records until the
    /// call settles.
    private let sinks = Mutex(Sinks())
    /// What each sink offered the write in progress (``willCommit(into:)``), until it ends.
    private let offered = Mutex<[(JSONLinesAuditSink, AuditOffer)]>([])

    struct Sinks {
        var touched: [JSONLinesAuditSink] = []
        var holding: [JSONLinesAuditSink] = []
    }

    init() {}

    /// Remembers that this call's records went to `sink` (its offers may ride the call's write).
    func touch(_ sink: JSONLinesAuditSink) {
        sinks.withLock { sinks in
            if !sinks.touched.contains(where: { $0 === sink }) { sinks.touched.append(sink) }
        }
    }

    /// Remembers that `sink` holds records of this call, to settle before the call returns.
    func hold(_ sink: JSONLinesAuditSink) {
        sinks.withLock { sinks in
            if !sinks.touched.contains(where: { $0 === sink }) { sinks.touched.append(sink) }
            if !sinks.holding.contains(where: { $0 === sink }) { sinks.holding.append(sink) }
        }
    }

    /// The sinks holding records of this call, forgotten as they are returned (each is settled once).
    func takeHolding() -> [JSONLinesAuditSink] {
        sinks.withLock { sinks in
            defer { sinks.holding = [] }
            return sinks.holding
        }
    }

    // MARK: - TransactionParticipant

    /// What the sinks this call wrote to offer for the store `owner`: only the sinks whose
    /// anchor that store keeps.
    public func willCommit(into owner: AnyObject) -> [MetadataChange] {
        let touched = sinks.withLock { $0.touched }
        var taken: [(JSONLinesAuditSink, AuditOffer)] = []
        var changes: [MetadataChange] = []
        for sink in touched {
            guard let keeper = sink.keeper, keeper.store.metadataOwner === owner else { continue }
            let offer = sink.shared.offer.withLock { $0 }
            guard !offer.isEmpty else { continue }
            taken.append((sink, offer))
            changes += keeper.changes(for: offer)
        }
        offered.withLock { $0 = taken }
        return changes
    }

    /// The write committed what the sinks offered: each forgets it (what was offered since stays).
    public func didCommit() {
        let taken = offered.withLock { offered in
            defer { offered = [] }
            return offered
        }
        for (sink, offer) in taken { sink.shared.offer.withLock { $0.forget(offer) } }
    }

    /// The write rolled back: the offers stay, for the next write or the call's flush.
    public func didRollBack() {
        offered.withLock { $0 = [] }
    }

    // MARK: - Pending decisions

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
}

extension AuditEvent {
    /// About how many bytes this decision adds to a record's line (generous: escaping can
    /// only double the text, the fixed fields take under 256 bytes, and an evaluator's reason under 160).
    var estimatedLength: Int {
        let item = self.item.map { $0.service.utf8.count + $0.account.utf8.count + $0.accessGroup.utf8.count } ?? 0
        let texts =
            (accessControlText?.utf8.count ?? 0) + 160 * reasons.count
            + notes.reduce(0) { $0 + $1.description.utf8.count + 4 }
            + ruleIDs.reduce(0) { $0 + $1.utf8.count + 4 }
        return 256 + 2 * (item + texts) + 48 * factors.count
    }
}
