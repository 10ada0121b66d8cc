import CCommandLine
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

    /// The few variables the CLI's wiring reads are what the whole environment has for them,
    /// and the paths made from them are the same.
    @Test func theVariablesReadAreTheEnvironmentsOwn() throws {
        let whole = ProcessEnvironment.current()
        let names = StandardPaths.variables + ProofRecords.variables + ["KEYGATE_TEST_SURELY_UNSET"]
        let some = ProcessEnvironment.values(names)
        #expect(some == whole.filter { names.contains($0.key) })
        #expect(some["KEYGATE_TEST_SURELY_UNSET"] == nil)
        let variables = ["HOME": "/home/u", "XDG_RUNTIME_DIR": "/run/user/1", "PATH": "/bin", "XDG_DATA_HOME": "/d"]
        let fromAll = try StandardPaths(application: "keygate", environment: variables)
        let fromSome = try StandardPaths(
            application: "keygate", environment: variables.filter { StandardPaths.variables.contains($0.key) })
        #expect(fromSome.dataDirectory == fromAll.dataDirectory)
        #expect(fromSome.ledgerDirectory == fromAll.ledgerDirectory)
        #expect(fromSome.runtimeDirectory == fromAll.runtimeDirectory)
    }

    /// Trimming slices between the first and last other character, with the same result as
    /// dropping whitespace from both ends character by character.
    @Test(arguments: ["  a b \n", "", " \t\n ", "x", "\u{2003}é\r\n", "a\n\nb", "\n\u{301}x "])
    func trimmingKeepsTheMiddle(_ text: String) {
        let dropped = String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        #expect(text.trimmingWhitespace == dropped)
        #expect(text.dropFirst(0).trimmingWhitespace == dropped)
    }

    /// Proof records are keyed by this boot's id, read with one `read`: the kernel's text
    /// without its line end.
    @Test func proofRecordsCarryThisBootsID() throws {
        let directory = try TemporaryDirectory()
        let records = try #require(try ProofRecords.open(directory: directory.path + "/run", environment: [:]))
        let text = try String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)
        #expect(records.bootID == text.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(records.bootID.count == 36)
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

    /// The release link's fopen (the runtime's argv search is its only caller) refuses
    /// /proc/self/maps once the start-up hook has the arguments, which it has in this process
    /// too; any other file opens as before.
    @Test func theArgvSearchSkipsTheMapsOnceTheHookHasTheArguments() throws {
        #expect(keygate_captured_argc() == CommandLine.argc)
        errno = 0
        #expect(__wrap_fopen("/proc/self/maps", "r") == nil)
        #expect(errno == ENOENT)
        let other = try #require(__wrap_fopen("/proc/self/status", "r"))
        #expect(fclose(other) == 0)
    }
}
