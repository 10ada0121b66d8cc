import KeygatePolicy
import Synchronization

/// Proofs the daemon remembers for reuse, in its own memory only (nothing a client writes or
/// sets can add, extend or move one; a daemon restart forgets them all).
///
/// A proof is kept under the key (uid, logind session, controlling terminal as the kernel
/// reports it, with its kernel session and that session leader's start time) and reused only
/// by a request with the same key, within the window that request asks for (at most 300 s,
/// Apple's cap). A caller with no logind session or no controlling terminal gets no key, so
/// nothing is kept or reused for it. A `lock` request, and a screen lock the daemon sees for
/// the caller's session, clear every proof of that uid and session; a logout ends the
/// session, and a new login is another session and another terminal leader.
final class ProofCache: Sendable {
    struct Key: Hashable, Sendable {
        let uid: UInt32
        let session: String
        let terminal: CallerTerminal
    }

    private let entries = Mutex<[Key: Proofs]>([:])

    /// The key of a caller, nil when it has no session or no terminal (no reuse).
    static func key(uid: UInt32, session: String?, terminal: CallerTerminal?) -> Key? {
        guard let session, !session.isEmpty, let terminal else { return nil }
        return Key(uid: uid, session: session, terminal: terminal)
    }

    /// A proof of `factor` under `key` no older than `window` seconds at `now` (and not from
    /// the future), else nil. The proof says it is reused within `window`
    /// (``KeygatePolicy/Proof/Origin/reused(window:)``), so every audit record listing it says so too.
    func reusable(_ factor: Factor, key: Key, window: Int, now: Timestamp) -> Proof? {
        guard window > 0 else { return nil }
        let limit = Int64(min(window, AuthenticationState.maximumReuseSeconds))
        return entries.withLock { entries in
            guard let proof = entries[key]?[factor], proof.time <= now,
                proof.time.wholeSeconds(until: now) <= limit
            else { return nil }
            return proof.reused(within: window)
        }
    }

    /// Keeps `proofs` under `key` (as proved, whatever their origin); forgets every proof older
    /// than 300 s on the way.
    func record(_ proofs: [Proof], key: Key, now: Timestamp) {
        entries.withLock { entries in
            var kept = entries[key] ?? Proofs()
            for proof in proofs where proof.time <= now { kept.record(proof.asProved) }
            entries[key] = kept
            let cap = Int64(AuthenticationState.maximumReuseSeconds)
            entries = entries.filter { _, proofs in
                proofs.all.contains { $0.time <= now && $0.time.wholeSeconds(until: now) <= cap }
            }
        }
    }

    /// The keys that hold proofs now.
    var keys: [Key] { entries.withLock { Array($0.keys) } }

    /// Forgets the proofs of `key` (its terminal's session leader is gone: a logout).
    func forget(_ key: Key) {
        _ = entries.withLock { $0.removeValue(forKey: key) }
    }

    /// Forgets every proof of `uid` in `session` (a `lock` request, a screen lock).
    func clear(uid: UInt32, session: String) {
        entries.withLock { entries in
            entries = entries.filter { key, _ in !(key.uid == uid && key.session == session) }
        }
    }
}
