import Foundation
import KeygateLinux
import KeygatePolicy
import KeygateTesting
import Testing

/// Issue 10 point 4: what a plain `get` reads at start-up with fewer system calls reads the
/// same thing (the executable's path, the failure ledger).
@Suite struct StartupPathTests {
    /// One `readlink` of `/proc/self/exe` gives the path `realpath` resolved component by
    /// component.
    @Test func theExecutablePathIsTheResolvedOne() throws {
        let resolved = try #require(realpath("/proc/self/exe", nil))
        defer { free(resolved) }
        #expect(CurrentProcess.executable == String(cString: resolved))
    }

    /// A lockout is read without the ledger's lock: it is still seen when the lock file cannot
    /// be opened (a directory in its place), where reading under the lock found no lockout.
    @Test func aLockoutIsSeenWhenTheLockCannotBeTaken() throws {
        let directory = try TemporaryDirectory()
        let ledger = FileAttemptLedger(directory: directory.path)
        let now = Timestamp(seconds: 1_000)
        let policy = AttemptPolicy(maxFailures: 2, windowSeconds: 900, lockoutSeconds: 300)
        _ = ledger.recordFailure(of: .passcode, at: now, policy: policy)
        let until = try #require(ledger.recordFailure(of: .passcode, at: now, policy: policy))
        let lock = directory.path + "/attempts-\(geteuid()).json.lock"
        #expect(unlink(lock) == 0)
        #expect(mkdir(lock, 0o700) == 0)
        #expect(ledger.lockout(of: .passcode, at: now) == until)
        #expect(ledger.lockout(of: .biometry, at: now) == nil)
    }
}
