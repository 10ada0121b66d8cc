import Glibc
import KeygatePolicy
import Synchronization

/// One uid's failure counters, kept by the daemon in that uid's state directory
/// (`users/<uid>/attempts`, mode 0600, owned by the daemon's user): shared by every
/// connection of the uid (one ledger object per uid, each change under its lock) and written
/// through to the file before the change counts, so a lockout holds across parallel
/// connections and across daemon restarts. No client can reach the file.
///
/// The file is text: `keygate-attempts 1`, then one line per factor,
/// `FACTOR FAILURES WINDOW-START LOCKED-UNTIL` (nanoseconds since 1970, `-` for none).
/// A file that is not exactly that, or not a private regular file of the daemon's user (a
/// symlink, another owner, group or other access, a hard link), fails closed: every factor
/// counts as locked out, nothing is ever written over it, and each refusal is logged. So
/// does a counter that cannot be written (a full disk): a failure that could not be kept
/// must not be forgotten at the next restart. Deleting the file (as root) is the reset.
final class DaemonAttemptLedger: AttemptLedger {
    private enum State {
        case records([Factor: AttemptRecord])
        case refused(String)
    }

    private let path: String
    private let state: Mutex<State>
    private static let header = "keygate-attempts 1"
    private static let counted: [Factor] = [.passcode, .biometry]

    /// The ledger in `path`, read now (a missing file is no failures).
    init(path: String) {
        self.path = path
        switch Self.load(path) {
        case .success(let records): state = Mutex(.records(records))
        case .failure(let problem):
            Log.line("\(path): \(problem.text); every factor of this uid stays locked out until the file is fixed")
            state = Mutex(.refused(problem.text))
        }
    }

    func lockout(of factor: Factor, at now: Timestamp) -> Timestamp? {
        state.withLock { state in
            switch state {
            case .records(let records):
                let record = records[factor] ?? AttemptRecord()
                return record.isLockedOut(at: now) ? record.lockedUntil : nil
            case .refused(let why):
                Log.line("\(path): \(why); \(factor) refused")
                return now.adding(seconds: 300)
            }
        }
    }

    func recordFailure(of factor: Factor, at now: Timestamp, policy: AttemptPolicy) -> Timestamp? {
        state.withLock { state in
            guard case .records(var records) = state else { return now.adding(seconds: 300) }
            var record = records[factor] ?? AttemptRecord()
            let locked = record.recordFailure(at: now, policy: policy)
            records[factor] = record
            if let problem = save(records) {
                Log.line("\(path): \(problem); every factor of this uid stays locked out")
                state = .refused(problem)
                return now.adding(seconds: Double(max(policy.lockoutSeconds, 300)))
            }
            state = .records(records)
            return locked ? record.lockedUntil : nil
        }
    }

    func recordSuccess(of factor: Factor) {
        state.withLock { state in
            guard case .records(var records) = state else { return }
            let before = records
            records[factor] = AttemptRecord()
            if factor == .passcode { records[.biometry] = AttemptRecord() }
            // Nothing to clear: no write (a success costs no fsync when nothing failed before it).
            guard Self.counted.contains(where: { (records[$0] ?? AttemptRecord()) != (before[$0] ?? AttemptRecord()) })
            else { return }
            if let problem = save(records) {
                Log.line("\(path): \(problem); every factor of this uid stays locked out")
                state = .refused(problem)
                return
            }
            state = .records(records)
        }
    }

    // MARK: - The file

    private struct Problem: Error {
        let text: String
    }

    private static func load(_ path: String) -> Result<[Factor: AttemptRecord], Problem> {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 && errno == ENOENT { return .success([:]) }
        guard fd >= 0 else { return .failure(Problem(text: "cannot be opened (errno \(errno))")) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            return .failure(Problem(text: "is not a regular file"))
        }
        guard info.st_uid == geteuid(), info.st_mode & 0o077 == 0, info.st_nlink == 1 else {
            return .failure(Problem(text: "was not written by the daemon (owner, mode or links are wrong)"))
        }
        guard info.st_size <= 4096 else { return .failure(Problem(text: "is too large")) }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        guard bytes.isEmpty || read(fd, &bytes, bytes.count) == bytes.count,
            let text = String(validating: bytes, as: UTF8.self)
        else { return .failure(Problem(text: "cannot be read")) }
        return parse(text).mapError { Problem(text: $0.text) }
    }

    private static func parse(_ text: String) -> Result<[Factor: AttemptRecord], Problem> {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.first == Substring(header), lines.last == "" else {
            return .failure(Problem(text: "line 1: header: not '\(header)' (a corrupt counter file)"))
        }
        var records: [Factor: AttemptRecord] = [:]
        for (offset, line) in lines.dropFirst().dropLast().enumerated() {
            let number = offset + 2
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count == 4, let factor = Factor(rawValue: String(fields[0])),
                counted.contains(factor), records[factor] == nil
            else { return .failure(Problem(text: "line \(number): factor: not a known factor once")) }
            guard let failures = Int(fields[1]), failures >= 0, failures < 1 << 20 else {
                return .failure(Problem(text: "line \(number): failures: not a count"))
            }
            func time(_ field: Substring, _ name: String) -> Result<Timestamp?, Problem> {
                if field == "-" { return .success(nil) }
                guard let value = Int64(field) else {
                    return .failure(Problem(text: "line \(number): \(name): not a time"))
                }
                return .success(Timestamp(nanoseconds: value))
            }
            let window: Timestamp?
            let until: Timestamp?
            switch (time(fields[2], "window-start"), time(fields[3], "locked-until")) {
            case (.success(let w), .success(let u)):
                window = w
                until = u
            case (.failure(let problem), _), (_, .failure(let problem)):
                return .failure(problem)
            }
            records[factor] = AttemptRecord(failures: failures, windowStart: window, lockedUntil: until)
        }
        return .success(records)
    }

    private static func format(_ records: [Factor: AttemptRecord]) -> String {
        var text = header + "\n"
        for factor in counted {
            let record = records[factor] ?? AttemptRecord()
            let window = record.windowStart.map { String($0.nanoseconds) } ?? "-"
            let until = record.lockedUntil.map { String($0.nanoseconds) } ?? "-"
            text += "\(factor.rawValue) \(record.failures) \(window) \(until)\n"
        }
        return text
    }

    /// Writes `records` durably (a private temporary file, fsync, rename); nil or the problem.
    private func save(_ records: [Factor: AttemptRecord]) -> String? {
        let temporary = path + ".new"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return "cannot be written (errno \(errno))" }
        let bytes = Array(Self.format(records).utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == bytes.count, synced, rename(temporary, path) == 0 else {
            unlink(temporary)
            return "cannot be written (errno \(errno))"
        }
        return nil
    }
}
