import Foundation
import KeygatePolicy

/// Proof records kept between invocations, like sudo's timestamps: in
/// `$XDG_RUNTIME_DIR/keygate/` (0700, files 0600, gone at logout or reboot).
///
/// A record is (uid, boot id, login session, factor, time). Later invocations in the same
/// login session and boot reuse a proof within the reuse window (default 0: always ask; at
/// most 300 s). Without a login session (`XDG_SESSION_ID`: cron, services) nothing is shared.
/// A proof also marks the boot as "unlocked since boot". `keygate lock` removes this
/// session's records. The directory must belong to this user and be private; otherwise it is
/// ignored (nothing is reused) with a warning. Without `XDG_RUNTIME_DIR` nothing is kept.
struct RuntimeRecords {
    let directory: String
    let uid: UInt32
    let bootID: String
    let session: String?

    struct Record: Codable, Equatable {
        var uid: UInt32
        var boot: String
        var session: String
        var factor: Factor
        var time: Int64
        var enrollment: String?
    }

    /// The records of this user, boot and session, or nil when none can be kept safely.
    static func open() -> RuntimeRecords? {
        let environment = ProcessInfo.processInfo.environment
        guard let base = environment["XDG_RUNTIME_DIR"], base.hasPrefix("/") else { return nil }
        let directory = base + "/keygate"
        mkdir(directory, 0o700)
        var status = stat()
        guard lstat(directory, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR, status.st_uid == geteuid(),
            status.st_mode & 0o077 == 0
        else {
            Console.err(
                "keygate: warning: ignoring \(directory): not a private directory of this user; proofs are not reused")
            return nil
        }
        let boot =
            (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown-boot"
        let session = environment["XDG_SESSION_ID"].flatMap { $0.isEmpty ? nil : $0 }
        return RuntimeRecords(directory: directory, uid: geteuid(), bootID: boot, session: session)
    }

    private var file: LockedFile { LockedFile(path: directory + "/proofs-\(uid).json") }
    private var bootPath: String { directory + "/boot-\(uid)-\(bootID)" }

    /// Whether a proof of presence was recorded during this boot.
    var bootRecorded: Bool {
        var status = stat()
        return lstat(bootPath, &status) == 0 && status.st_uid == geteuid()
    }

    private func all() -> [Record] {
        guard let data = try? file.read() else { return [] }
        return (try? JSONDecoder().decode([Record].self, from: data)) ?? []
    }

    private func isMine(_ record: Record) -> Bool {
        record.uid == uid && record.boot == bootID && record.session == session
    }

    /// The proofs recorded for this session and boot (none without a session).
    func proofs() -> [Proof] {
        guard session != nil else { return [] }
        let records = (try? file.withLock { all() }) ?? []
        return records.filter(isMine).map { record in
            Proof(
                factor: record.factor, time: Timestamp(nanoseconds: record.time),
                enrollment: record.enrollment.flatMap { EnrollmentSetHash(hex: $0) })
        }
    }

    /// Records `proofs` (replacing older ones of the same factor) and marks the boot.
    func save(_ proofs: [Proof]) throws {
        guard !proofs.isEmpty else { return }
        if !bootRecorded {
            _ = FileManager.default.createFile(
                atPath: bootPath, contents: Data(), attributes: [.posixPermissions: 0o600])
        }
        guard let session else { return }
        try file.withLock {
            var records = all().filter { record in !(isMine(record) && proofs.contains { $0.factor == record.factor }) }
            records += proofs.map {
                Record(
                    uid: uid, boot: bootID, session: session, factor: $0.factor, time: $0.time.nanoseconds,
                    enrollment: $0.enrollment?.hex)
            }
            try file.write(try JSONEncoder().encode(records))
        }
    }

    /// Forgets this session's proofs.
    func forget() throws {
        try file.withLock { try file.write(try JSONEncoder().encode(all().filter { !isMine($0) })) }
    }
}

/// Keygate's failure counters for this user, shared by every invocation whatever store it
/// uses: each failure is counted under a file lock at once, so parallel or separate
/// invocations cannot escape a lockout.
struct FileAttemptLedger: AttemptLedger {
    let file: LockedFile

    /// The ledger in `directory` (the user's Keygate data directory).
    init(directory: String) {
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

    func lockout(of factor: Factor, at now: Timestamp) -> Timestamp? {
        let record = ((try? file.withLock { load() }) ?? [:])[factor.rawValue]?.record ?? AttemptRecord()
        return record.isLockedOut(at: now) ? record.lockedUntil : nil
    }

    func recordFailure(of factor: Factor, at now: Timestamp, policy: AttemptPolicy) -> Timestamp? {
        change { entries in
            var record = entries[factor.rawValue]?.record ?? AttemptRecord()
            let locked = record.recordFailure(at: now, policy: policy)
            entries[factor.rawValue] = Entry(record)
            return locked ? record.lockedUntil : nil
        }
    }

    func recordSuccess(of factor: Factor) {
        _ = change { entries in
            entries[factor.rawValue] = Entry()
            if factor == .passcode { entries[Factor.biometry.rawValue] = Entry() }
            return nil
        }
    }
}
