import Foundation
import Testing

/// Issue 9 ("Hardening"), the command line's part: each test replays the scenario the issue
/// reported and checks the behaviour asked for.
@Suite struct HardeningTests {
    // MARK: - Point 15: empty flag lists

    /// `--access-control " "` and `--access-control ""` used to mean "no flags", and an
    /// empty `--bound-enrollment` bound the item to the set {""}; all are `errSecParam` now.
    @Test(arguments: [
        ["--access-control", ""], ["--access-control", " "], ["--access-control", "\t"],
        ["--access-control", "biometryCurrentSet", "--bound-enrollment", ""],
        ["--access-control", "biometryCurrentSet", "--bound-enrollment", " "],
        ["--access-control", "biometryCurrentSet", "--bound-enrollment", "f1,"],
    ])
    func emptyListsAreRefusedByEvaluate(_ extra: [String]) throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("ctx.json", contents: "{}")
        let result = try KeygateBinary.run(["evaluate", "--context", path] + extra)
        #expect(result.status == 8, "\(extra): \(result.stdoutText)")
        #expect(result.lastErrorLine.hasPrefix("keygate: "))
        #expect(result.lastErrorLine.hasSuffix("(errSecParam -50)"))
        #expect(result.stdout.isEmpty)
    }

    @Test func emptyFlagListsAreRefusedByAddAndNothingIsAdded() throws {
        let world = try CLIWorld()
        for flags in ["", " "] {
            let result = try world.add("api", "me", Data("v".utf8), ["--access-control", flags])
            #expect(result.status == 8)
            #expect(result.lastErrorLine.contains("empty access-control flag"))
        }
        #expect(try world.run(["list"]).stdout.isEmpty)
    }
}
