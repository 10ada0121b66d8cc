import FoundationEssentials
import Glibc
public import KeygatePolicy

/// Keygate's failure counters for this user, shared by every process whatever store or
/// application it uses: each failure is counted under a file lock at once, so parallel or
/// separate invocations cannot escape a lockout.
///
/// ``StandardPaths/ledgerDirectory`` is the one place all applications share.
public struct FileAttemptLedger: AttemptLedger {
    let file: LockedFile

    /// The ledger in `directory` (created 0700 when missing).
    public init(directory: String) {
        mkdir(directory, 0o700)
        file = LockedFile(path: directory + "/attempts-\(geteuid()).json")
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

    private func load() -> [String: Entry] {
        guard let data = try? file.read() else { return [:] }
        return (try? JSONDecoder().decode([String: Entry].self, from: data)) ?? [:]
    }

    private func change(_ body: (inout [String: Entry]) -> Timestamp?) -> Timestamp? {
        (try? file.withLock {
            var entries = load()
            let result = body(&entries)
            try file.write(try JSONEncoder().encode(entries))
            return result
        }) ?? nil
    }

    /// The end of `factor`'s lockout when it is locked out at `now`, else nil.
    ///
    /// Read without the lock: every change replaces the file whole (``LockedFile/write(_:)``
    /// renames a complete file into place), so a read sees the ledger before or after any
    /// change, as it would queued behind the lock; a plain `get` then costs one `lstat` here
    /// (the file is absent until a first failure), not an open, two `flock`s and a close.
    public func lockout(of factor: Factor, at now: Timestamp) -> Timestamp? {
        let record = load()[factor.rawValue]?.record ?? AttemptRecord()
        return record.isLockedOut(at: now) ? record.lockedUntil : nil
    }

    /// Counts a failure at once, under the file lock.
    public func recordFailure(of factor: Factor, at now: Timestamp, policy: AttemptPolicy) -> Timestamp? {
        change { entries in
            var record = entries[factor.rawValue]?.record ?? AttemptRecord()
            let locked = record.recordFailure(at: now, policy: policy)
            entries[factor.rawValue] = Entry(record)
            return locked ? record.lockedUntil : nil
        }
    }

    /// Clears `factor`'s failures (a passcode success clears biometry's too).
    public func recordSuccess(of factor: Factor) {
        _ = change { entries in
            entries[factor.rawValue] = Entry()
            if factor == .passcode { entries[Factor.biometry.rawValue] = Entry() }
            return nil
        }
    }
}
