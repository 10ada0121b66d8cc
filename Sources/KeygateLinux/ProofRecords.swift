import FoundationEssentials
import Glibc
public import KeygatePolicy

/// Proof records kept between processes, like sudo's timestamps: in the application's
/// runtime directory (``StandardPaths/runtimeDirectory``, for the
/// CLI `$XDG_RUNTIME_DIR/keygate/`; 0700, files 0600, gone at logout or reboot).
///
/// A record is (uid, boot id, login session, factor, time). Later invocations in the same
/// login session and boot reuse a proof within the reuse window (default 0: always ask; at
/// most 300 s). Without a login session (`XDG_SESSION_ID`: cron, services) nothing is shared.
/// A proof also marks the boot as "unlocked since boot". `keygate lock` removes this
/// session's records. The directory must belong to this user and be private; otherwise
/// ``open(directory:environment:)`` refuses it (nothing is reused). Without a runtime
/// directory nothing is kept.
///
/// In embedded mode the user can write these files, so a record is a convenience, not a
/// boundary: see the README's threat model.
public struct ProofRecords: Sendable {
    /// The directory the records live in.
    public let directory: String
    /// The user they belong to (the effective uid).
    public let uid: UInt32
    /// This boot (`/proc/sys/kernel/random/boot_id`).
    public let bootID: String
    /// The login session (`XDG_SESSION_ID`), nil outside one.
    public let session: String?

    struct Record: Codable, Equatable {
        var uid: UInt32
        var boot: String
        var session: String
        var factor: Factor
        var time: Int64
        var enrollment: String?
    }

    /// This boot's id (`/proc/sys/kernel/random/boot_id`, 37 bytes), or nil when it cannot be
    /// read: one `read` into a buffer on the stack, no `Data` or encoding machinery, which a
    /// short process would pay for at start-up (the bench's "keygate get in a login session" row).
    private static func bootID() -> String? {
        let descriptor = Glibc.open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { buffer -> String? in
            let count = read(descriptor, buffer.baseAddress, buffer.count)
            guard count >= 0 else { return nil }
            return String(decoding: UnsafeMutableBufferPointer(rebasing: buffer[..<count]), as: UTF8.self)
                .trimmingWhitespace
        }
    }

    /// The environment variables ``open(directory:environment:)`` reads.
    public static let variables = ["XDG_SESSION_ID"]

    /// The records of this user, boot and session in `directory` (created 0700 when
    /// missing), or nil when there is no runtime directory at all.
    /// - Throws: `errSecIO` when the directory is not a private directory of this user
    ///   (nothing is reused then; say so and go on).
    public static func open(directory: String?, environment: [String: String] = ProcessEnvironment.current())
        throws(KeygateError) -> ProofRecords?
    {
        guard let directory else { return nil }
        mkdir(directory, 0o700)
        var status = stat()
        guard lstat(directory, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR, status.st_uid == geteuid(),
            status.st_mode & 0o077 == 0
        else {
            throw KeygateError(
                .io, "\(directory) is not a private directory of this user; proofs are not reused",
                condition: .notPrivate)
        }
        let boot = bootID() ?? "unknown-boot"
        let session = environment["XDG_SESSION_ID"].flatMap { $0.isEmpty ? nil : $0 }
        return ProofRecords(directory: directory, uid: geteuid(), bootID: boot, session: session)
    }

    private var file: LockedFile { LockedFile(path: directory + "/proofs-\(uid).json") }
    private var bootPath: String { directory + "/boot-\(uid)-\(bootID)" }

    /// Whether a proof of presence was recorded during this boot.
    public var bootRecorded: Bool {
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
    public func proofs() -> [Proof] {
        guard session != nil else { return [] }
        let records = (try? file.withLock { all() }) ?? []
        return records.filter(isMine).map { record in
            Proof(
                factor: record.factor, time: Timestamp(nanoseconds: record.time),
                enrollment: record.enrollment.flatMap { EnrollmentSetHash(hex: $0) })
        }
    }

    /// The proofs recorded for this session and boot that lie within `window` seconds at `now`
    /// (not from the future), each marked as an earlier request's reused within that window
    /// (``KeygatePolicy/Proof/Origin/reused(window:)``), for a context with that reuse window:
    /// every audit record listing one notes the reuse (`proofReused: …`), as the broker's do,
    /// and an older one, which could not count, is not listed at all. None when `window` is 0
    /// (always ask).
    public func reusableProofs(within window: Int, at now: Timestamp = SystemClock().now()) -> [Proof] {
        guard window > 0 else { return [] }
        let state = AuthenticationState(reuseSeconds: window)
        return proofs().filter { state.isFresh($0.time, at: now) }.map { $0.reused(within: state.reuseSeconds) }
    }

    /// Records `proofs` (replacing older ones of the same factor) and marks the boot.
    public func save(_ proofs: [Proof]) throws {
        guard !proofs.isEmpty else { return }
        if !bootRecorded {
            let descriptor = Glibc.open(bootPath, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            if descriptor >= 0 { close(descriptor) }
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

    /// Forgets this session's proofs (`keygate lock`).
    public func forget() throws {
        try file.withLock { try file.write(try JSONEncoder().encode(all().filter { !isMine($0) })) }
    }
}
