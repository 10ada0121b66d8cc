import Foundation
import Glibc
import KeygateTesting
import Testing

/// Session 25, defect 1, end to end: a failure ledger others can read (or a truncated one) is
/// a lockout for `get` and `prove`, the warning names the file, and the file is left as it is.
@Suite struct LedgerFailsClosedTests {
    @Test(arguments: ["readable by others", "truncated"])
    func aLedgerThatCannotBeTrustedLocksOutAndIsLeftAlone(_ damage: String) throws {
        let world = try CLIWorld()
        #expect(try world.add("bank", "me", Data("t".utf8), ["--access-control", "devicePasscode"]).status == 0)
        let read = ["get", "--service", "bank", "--account", "me"]
        #expect(try world.run(read, passphrase: "wrong").status != 0)
        let ledger = world.data + "/keygate/attempts-\(geteuid()).json"
        if damage == "truncated" {
            #expect(truncate(ledger, 0) == 0)
        } else {
            #expect(chmod(ledger, 0o644) == 0)
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: ledger))
        for arguments in [read, ["prove"]] {
            let result = try world.run(arguments, passphrase: "s3cret")
            #expect(result.status == 5, "\(arguments): \(result.stderr)")
            #expect(result.lastErrorLine.contains("locked out"))
            #expect(result.stderr.contains("warning: \(ledger)"), "\(result.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: ledger)) == before)
        var status = stat()
        #expect(stat(ledger, &status) == 0)
        #expect(status.st_mode & 0o777 == (damage == "truncated" ? 0o600 : 0o644))
    }
}
