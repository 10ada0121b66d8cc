import Foundation
import KeygatePolicy

/// Proof records kept between invocations, like sudo's timestamps: in
/// `$XDG_RUNTIME_DIR/keygate/` (0700, files 0600, gone at logout or reboot).
///
/// A record is (uid, boot id, login session, factor, time). Later invocations in the same
/// session and boot reuse a proof within the reuse window (default 0: always ask; at most
/// 300 s). A proof also marks the boot as "unlocked since boot". `keygate lock` removes the
/// records of this session. Without `XDG_RUNTIME_DIR` nothing is kept: every invocation asks.
struct RuntimeRecords {
    let directory: String
    let uid: UInt32
    let bootID: String
    let session: String

    struct Record: Codable, Equatable {
        var uid: UInt32
        var boot: String
        var session: String
        var factor: Factor
        var time: Int64
        var enrollment: String?
    }

    /// The records of this user, boot and session, or nil without a runtime directory.
    static func open() throws(KeygateError) -> RuntimeRecords? {
        let environment = ProcessInfo.processInfo.environment
        guard let base = environment["XDG_RUNTIME_DIR"], base.hasPrefix("/") else { return nil }
        let directory = base + "/keygate"
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw KeygateError(.io, "cannot create \(directory): \(error.localizedDescription)")
        }
        let boot =
            (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown-boot"
        return RuntimeRecords(
            directory: directory, uid: geteuid(), bootID: boot, session: environment["XDG_SESSION_ID"] ?? "none")
    }

    private var proofsPath: String { directory + "/proofs-\(uid).json" }
    private var bootPath: String { directory + "/boot-\(uid)-\(bootID)" }

    /// Whether a proof of presence was recorded during this boot.
    var bootRecorded: Bool { FileManager.default.fileExists(atPath: bootPath) }

    private func all() -> [Record] {
        guard let data = FileManager.default.contents(atPath: proofsPath) else { return [] }
        return (try? JSONDecoder().decode([Record].self, from: data)) ?? []
    }

    private func isMine(_ record: Record) -> Bool {
        record.uid == uid && record.boot == bootID && record.session == session
    }

    /// The proofs recorded for this session and boot.
    func proofs() -> [Proof] {
        all().filter(isMine).map { record in
            Proof(
                factor: record.factor, time: Timestamp(nanoseconds: record.time),
                enrollment: record.enrollment.flatMap { EnrollmentSetHash(hex: $0) })
        }
    }

    /// Records `proofs` (replacing older ones of the same factor) and marks the boot.
    func save(_ proofs: [Proof]) throws(KeygateError) {
        guard !proofs.isEmpty else { return }
        var records = all().filter { record in !(isMine(record) && proofs.contains { $0.factor == record.factor }) }
        records += proofs.map {
            Record(
                uid: uid, boot: bootID, session: session, factor: $0.factor, time: $0.time.nanoseconds,
                enrollment: $0.enrollment?.hex)
        }
        try write(records, to: proofsPath)
        if !bootRecorded {
            _ = FileManager.default.createFile(
                atPath: bootPath, contents: Data(), attributes: [.posixPermissions: 0o600])
        }
    }

    /// Forgets this session's proofs.
    func forget() throws(KeygateError) {
        try write(all().filter { !isMine($0) }, to: proofsPath)
    }

    private func write(_ records: [Record], to path: String) throws(KeygateError) {
        do {
            let data = try JSONEncoder().encode(records)
            let temporary = path + ".tmp"
            _ = FileManager.default.createFile(
                atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600])
            guard rename(temporary, path) == 0 else { throw KeygateError(.io, "cannot replace \(path)") }
        } catch let error as KeygateError {
            throw error
        } catch {
            throw KeygateError(.io, "cannot write \(path): \(error.localizedDescription)")
        }
    }
}

/// Keygate's failure counters, kept between invocations beside the store, so repeated
/// invocations cannot escape the lockout.
struct AttemptRecords {
    let path: String

    struct Stored: Codable {
        var passcode: Entry
        var biometry: Entry
    }

    struct Entry: Codable {
        var failures: Int
        var windowStart: Int64?
        var lockedUntil: Int64?

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

    func load() -> FactorAttempts {
        var attempts = FactorAttempts()
        guard let data = FileManager.default.contents(atPath: path),
            let stored = try? JSONDecoder().decode(Stored.self, from: data)
        else { return attempts }
        attempts.passcode = stored.passcode.record
        attempts.biometry = stored.biometry.record
        return attempts
    }

    func save(_ attempts: FactorAttempts) {
        guard
            let data = try? JSONEncoder().encode(
                Stored(passcode: Entry(attempts.passcode), biometry: Entry(attempts.biometry)))
        else { return }
        let temporary = path + ".tmp"
        _ = FileManager.default.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600])
        rename(temporary, path)
    }
}
