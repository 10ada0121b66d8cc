import Synchronization

/// The policy set in force, swapped whole on reload.
///
/// A reload parses and validates every file first; only when all of them are good does the
/// new set replace the old one. On any error the old set stays in force and the error is
/// thrown: there is never a half-loaded set.
public final class PolicyStore: Sendable {
    private let current: Mutex<PolicySet>

    /// A store holding `initial` (default: no rules).
    public init(_ initial: PolicySet = .empty) {
        current = Mutex(initial)
    }

    /// The set in force now.
    public var policies: PolicySet { current.withLock { $0 } }

    /// Replaces the set with one built from `files` (name and text, in the order given).
    /// - Throws: ``PolicyParseError``; the set in force is then unchanged.
    public func reload(files: [(name: String, text: String)]) throws(PolicyParseError) {
        let next = try PolicySet(files: files)
        current.withLock { $0 = next }
    }

    /// Puts `set` in force (it is already validated, being a ``PolicySet``).
    public func replace(with set: PolicySet) {
        current.withLock { $0 = set }
    }
}
