import FoundationEssentials
import Glibc
public import KeygatePolicy
import Synchronization

/// Keygate's failure counters for this user, shared by every process whatever store or
/// application it uses: each failure is counted under a file lock at once, so parallel or
/// separate invocations cannot escape a lockout.
///
/// ``StandardPaths/ledgerDirectory`` is the one place all applications share.
///
/// It fails closed, as the broker's ledger does: a file that cannot be trusted or read (a
/// symlink, another owner, group or other access, an unreadable, truncated or corrupt file)
/// counts as every factor locked out, and is never written over; so does a failure that
/// cannot be counted (the lock cannot be taken, the file cannot be written): that attempt ends
/// in a lockout rather than be forgotten. Each refusal goes to `report` (once per distinct
/// problem), naming the file and what is wrong. A missing file is no failures; deleting the file is the reset.
public struct FileAttemptLedger: AttemptLedger {
    let file: LockedFile
    private let reporter: Reporter

    /// How long a ledger that cannot be used keeps a factor locked out, at least: asked again
    /// after it, the ledger is read again.
    static let refusalSeconds = 300

    /// The ledger in `directory` (created 0700 when missing).
    /// - Parameters:
    ///   - directory: where the counter file `attempts-<uid>.json` lives.
    ///   - report: takes one line for each refusal: the file and what is wrong with it (never a
    ///     secret); by default refusals are silent (the outcome is still a lockout).
    public init(directory: String, report: @escaping @Sendable (String) -> Void = { _ in }) {
        mkdir(directory, 0o700)
        file = LockedFile(path: directory + "/attempts-\(geteuid()).json")
        reporter = Reporter(report)
    }

    /// Passes each distinct line on once: a command asks for several factors' lockouts.
    private final class Reporter: Sendable {
        private let report: @Sendable (String) -> Void
        private let sent = Mutex<Set<String>>([])

        init(_ report: @escaping @Sendable (String) -> Void) { self.report = report }

        func callAsFunction(_ line: String) {
            guard sent.withLock({ $0.insert(line).inserted }) else { return }
            report(line)
        }
    }

    private struct Entry: Codable {
        var failures = 0
        var windowStart: Int64?
        var lockedUntil: Int64?

        init() {}

        init(_ record: AttemptRecord) {
            failures = record.failures
            windowStart = record.windowStart?.nanoseconds
            lockedUntil = record.lockedUntil?.nanoseconds
        }

        var record: AttemptRecord {
            AttemptRecord(
                failures: failures, windowStart: windowStart.map(Timestamp.init(nanoseconds:)),
                lockedUntil: lockedUntil.map(Timestamp.init(nanoseconds:)))
        }
    }

    /// The entries, none when the file is missing. - Throws: what makes the file unusable.
    private func load() throws(KeygateError) -> [String: Entry] {
        guard let data = try file.read() else { return [:] }
        guard let entries = try? JSONDecoder().decode([String: Entry].self, from: data),
            entries.values.allSatisfy({ $0.failures >= 0 })
        else {
            throw KeygateError(.io, "\(file.path) is not a failure ledger (truncated or corrupt); not trusting it")
        }
        return entries
    }

    /// Runs `body` over the entries under the lock and writes them back when it asks to.
    /// - Throws: what made the ledger unusable; nothing is written then.
    private func change<T>(
        _ body: (inout [String: Entry]) -> (result: T, write: Bool)
    ) throws(KeygateError) -> T {
        do {
            return try file.withLock {
                var entries = try load()
                let (result, write) = body(&entries)
                if write { try file.write(try JSONEncoder().encode(entries), durably: true) }
                return result
            }
        } catch let error as KeygateError {
            throw error
        } catch {
            throw KeygateError(.io, "\(file.path): \(error)")
        }
    }

    /// A lockout standing for a ledger that cannot be used: reported, and at least
    /// ``refusalSeconds`` long.
    private func refusal(_ error: KeygateError, at now: Timestamp, lasting seconds: Int = 0) -> Timestamp {
        reporter("\(error.message); every factor counts as locked out until the failure ledger is fixed")
        return now.adding(seconds: Double(max(seconds, Self.refusalSeconds)))
    }

    /// The end of `factor`'s lockout when it is locked out at `now`, else nil; a ledger that
    /// cannot be read or trusted is a lockout.
    ///
    /// Read without the lock: every change replaces the file whole (``LockedFile/write(_:)``
    /// renames a complete file into place), so a read sees the ledger before or after any
    /// change, as it would queued behind the lock; a plain `get` then costs one `lstat` here
    /// (the file is absent until a first failure), not an open, two `flock`s and a close.
    public func lockout(of factor: Factor, at now: Timestamp) -> Timestamp? {
        let entries: [String: Entry]
        do {
            entries = try load()
        } catch {
            return refusal(error, at: now)
        }
        let record = entries[factor.rawValue]?.record ?? AttemptRecord()
        return record.isLockedOut(at: now) ? record.lockedUntil : nil
    }

    /// Counts a failure at once, under the file lock. A failure that cannot be counted (the
    /// ledger cannot be read, trusted, locked or written) returns a lockout instead.
    public func recordFailure(of factor: Factor, at now: Timestamp, policy: AttemptPolicy) -> Timestamp? {
        do {
            return try change { entries in
                var record = entries[factor.rawValue]?.record ?? AttemptRecord()
                let locked = record.recordFailure(at: now, policy: policy)
                entries[factor.rawValue] = Entry(record)
                return (locked ? record.lockedUntil : nil, true)
            }
        } catch {
            return refusal(error, at: now, lasting: policy.lockoutSeconds)
        }
    }

    /// Clears `factor`'s failures (a passcode success clears biometry's too). Nothing is
    /// written when there is nothing to clear, nor over a ledger that cannot be used.
    public func recordSuccess(of factor: Factor) {
        let cleared = factor == .passcode ? [factor, .biometry] : [factor]
        do {
            try change { entries in
                let changed = cleared.contains { (entries[$0.rawValue]?.record ?? AttemptRecord()) != AttemptRecord() }
                for factor in cleared { entries[factor.rawValue] = Entry() }
                return ((), changed)
            }
        } catch {
            reporter("\(error.message); the failures of \(factor) were not cleared")
        }
    }
}
