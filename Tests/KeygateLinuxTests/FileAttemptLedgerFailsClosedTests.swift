import Foundation
import KeygateLinux
import KeygatePolicy
import KeygateTesting
import Synchronization
import Testing

/// Session 25, defect 1: the CLI's failure ledger fails closed as the broker's does. A file it
/// cannot trust or read counts as a lockout and is never written over; a failure it cannot
/// keep ends in a lockout.
@Suite struct FileAttemptLedgerFailsClosedTests {
    /// What a bad ledger file looks like.
    enum Damage: String, CaseIterable, CustomTestStringConvertible {
        case readableByOthers, truncated, corrupt, symlink
        var testDescription: String { rawValue }
    }

    static let policy = AttemptPolicy(maxFailures: 5, windowSeconds: 900, lockoutSeconds: 60)
    static let now = Timestamp(seconds: 10_000)

    /// A ledger directory with two failures of the passcode counted, and the ledger's path.
    static func ledgerWithFailures() throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory()
        let ledger = FileAttemptLedger(directory: directory.path)
        #expect(ledger.recordFailure(of: .passcode, at: now, policy: policy) == nil)
        #expect(ledger.recordFailure(of: .passcode, at: now, policy: policy) == nil)
        return (directory, directory.path + "/attempts-\(geteuid()).json")
    }

    /// Each damage: both factors count as locked out, a success does not rewrite the file,
    /// a failure is a lockout, and the report names the file.
    @Test(arguments: Damage.allCases)
    func aDamagedLedgerIsALockoutAndIsLeftAlone(_ damage: Damage) throws {
        let (directory, path) = try Self.ledgerWithFailures()
        switch damage {
        case .readableByOthers: #expect(chmod(path, 0o644) == 0)
        case .truncated: #expect(truncate(path, 0) == 0)
        case .corrupt: try Data("{\"passcode\":{\"failures\":".utf8).write(to: URL(fileURLWithPath: path))
        case .symlink:
            let elsewhere = directory.path + "/elsewhere.json"
            try Data("{}".utf8).write(to: URL(fileURLWithPath: elsewhere))
            #expect(chmod(elsewhere, 0o600) == 0)
            #expect(unlink(path) == 0)
            #expect(symlink(elsewhere, path) == 0)
        }
        let before = try Self.snapshot(path)
        let reports = Mutex<[String]>([])
        let ledger = FileAttemptLedger(directory: directory.path) { line in reports.withLock { $0.append(line) } }
        let passcode = try #require(ledger.lockout(of: .passcode, at: Self.now))
        #expect(passcode > Self.now)
        #expect(ledger.lockout(of: .biometry, at: Self.now) != nil)
        ledger.recordSuccess(of: .passcode)
        #expect(try Self.snapshot(path) == before, "a ledger that cannot be trusted is never written over")
        #expect(ledger.lockout(of: .passcode, at: Self.now) != nil, "a success does not clear it")
        let failure = try #require(ledger.recordFailure(of: .passcode, at: Self.now, policy: Self.policy))
        #expect(failure >= Self.now.adding(seconds: 300))
        #expect(try Self.snapshot(path) == before)
        let lines = reports.withLock { $0 }
        #expect(!lines.isEmpty)
        #expect(lines.allSatisfy { $0.contains(path) }, "\(lines)")
        #expect(Set(lines).count == lines.count, "each problem is reported once")
    }

    /// A failure that cannot be written (here the temporary file's name is taken by a
    /// directory) is not forgotten: it ends in a lockout, reported with the file and errno text.
    @Test func aFailureThatCannotBeWrittenIsALockout() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/attempts-\(geteuid()).json"
        #expect(mkdir(path + ".\(getpid()).tmp", 0o700) == 0)
        let reports = Mutex<[String]>([])
        let ledger = FileAttemptLedger(directory: directory.path) { line in reports.withLock { $0.append(line) } }
        let until = try #require(ledger.recordFailure(of: .passcode, at: Self.now, policy: Self.policy))
        #expect(until >= Self.now.adding(seconds: 300))
        let lines = reports.withLock { $0 }
        #expect(lines.count == 1)
        #expect(lines.first?.contains(path) == true)
        #expect(lines.first?.contains("Is a directory") == true, "\(lines)")
    }

    /// A failure that cannot take the lock (a directory in the lock file's place) ends in a
    /// lockout too.
    @Test func aFailureThatCannotBeLockedIsALockout() throws {
        let directory = try TemporaryDirectory()
        #expect(mkdir(directory.path + "/attempts-\(geteuid()).json.lock", 0o700) == 0)
        let ledger = FileAttemptLedger(directory: directory.path)
        #expect(ledger.recordFailure(of: .passcode, at: Self.now, policy: Self.policy) != nil)
    }

    /// A healthy ledger still counts as before: no lockout below the limit, a success clears
    /// the count, and a success with nothing to clear writes no file.
    @Test func aHealthyLedgerCountsAsBefore() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/attempts-\(geteuid()).json"
        let ledger = FileAttemptLedger(directory: directory.path)
        ledger.recordSuccess(of: .passcode)
        #expect(access(path, F_OK) != 0, "nothing to clear, nothing written")
        for _ in 1..<5 { #expect(ledger.recordFailure(of: .passcode, at: Self.now, policy: Self.policy) == nil) }
        ledger.recordSuccess(of: .passcode)
        for _ in 1..<5 { #expect(ledger.recordFailure(of: .passcode, at: Self.now, policy: Self.policy) == nil) }
        #expect(ledger.lockout(of: .passcode, at: Self.now) == nil)
        let until = try #require(ledger.recordFailure(of: .passcode, at: Self.now, policy: Self.policy))
        #expect(until == Self.now.adding(seconds: 60))
        #expect(ledger.lockout(of: .passcode, at: Self.now) == until)
    }

    /// The file's bytes, mode and inode (what a rewrite would change).
    static func snapshot(_ path: String) throws -> [String] {
        var status = stat()
        #expect(lstat(path, &status) == 0)
        let bytes = (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
        return [bytes.base64EncodedString(), String(status.st_mode), String(status.st_ino)]
    }
}
