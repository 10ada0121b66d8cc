import Foundation
import Testing

/// Short options, `--` and the help layout (issue 11, point 5).
@Suite struct ShortOptionTests {
    @Test func shortOptionsNameTheSameItemsAsLongOnes() throws {
        let world = try CLIWorld(password: nil)
        #expect(try world.run(["add", "-s", "api", "-a", "me", "-g", "team"], stdin: Data("v1".utf8)).status == 0)
        #expect(
            try world.run(["get", "--service", "api", "--account", "me", "--access-group", "team"]).stdout
                == Data("v1".utf8))
        // -xVALUE, like getopt.
        #expect(try world.run(["get", "-sapi", "-ame", "-gteam"]).stdout == Data("v1".utf8))
        #expect(try world.run(["get", "-s", "api", "-a", "me"]).status == 3, "another access group")
        #expect(try world.run(["delete", "-s", "api", "-a", "me", "-g", "team"]).status == 0)
    }

    /// The word after an option that takes a value is its value, even when it starts with a
    /// dash; so an account named `-admin` needs no escaping.
    @Test func aValueMayStartWithADash() throws {
        let world = try CLIWorld(password: nil)
        #expect(try world.run(["add", "-s", "api", "-a", "-admin"], stdin: Data("v".utf8)).status == 0)
        #expect(try world.run(["get", "--service", "api", "--account=-admin"]).stdout == Data("v".utf8))
        #expect(try world.run(["get", "-s", "api", "-a-admin"]).stdout == Data("v".utf8))
        #expect(try world.run(["list", "-s", "api"]).stdoutText.contains(#""account": "-admin""#))
    }

    /// `--` ends the options: after it, `-h` is no help request and a dash-led word is an
    /// argument (here the backup file), where before it is an unknown option.
    @Test func doubleDashEndsOptions() throws {
        let world = try CLIWorld(password: nil)
        let before = try world.run(["import", "-old.backup"])
        #expect(before.status == 2)
        #expect(before.lastErrorLine == "keygate: unknown option '-o' (errSecParam -50)")
        let after = try world.run(["import", "--", "-old.backup"])
        #expect(after.status == 2, "a missing backup file is a bad input file")
        #expect(
            after.lastErrorLine
                == "keygate: -old.backup: cannot read the file: No such file or directory (errSecParam -50)")
        let help = try world.run(["import", "--", "-h"])
        #expect(help.lastErrorLine == "keygate: -h: cannot read the file: No such file or directory (errSecParam -50)")
        #expect(help.stdout.isEmpty)
        // A second `--` after the first is an argument too.
        #expect(
            try world.run(["import", "--", "--"]).lastErrorLine
                == "keygate: --: cannot read the file: No such file or directory (errSecParam -50)")
        // Commands that take no arguments still refuse one after `--`.
        #expect(try world.run(["get", "-s", "api", "-a", "me", "--", "x"]).status == 2)
    }

    @Test func globalShortOptions() throws {
        let version = try KeygateBinary.run(["-V"])
        #expect(version.status == 0)
        #expect(version.stdoutText.hasPrefix("keygate "))
        #expect(try KeygateBinary.run(["--version"]).stdout == version.stdout)
        let help = try KeygateBinary.run(["-h"])
        #expect(help.status == 0)
        #expect(help.stdoutText.contains("  -V, --version"))
        #expect(help.stdoutText.contains("  -h, --help"))
    }

    @Test func unknownShortOptionsAndMisusedFlagsAreUsageErrors() throws {
        for (arguments, message) in [
            (["get", "-x"], "keygate: unknown option '-x' (errSecParam -50)"),
            (["-Z", "list"], "keygate: unknown option '-Z' (errSecParam -50)"),
            (["get", "-s"], "keygate: option '--service' needs a value (errSecParam -50)"),
            (["-Vx"], "keygate: option '-V' takes no value (got '-Vx') (errSecParam -50)"),
        ] {
            let result = try KeygateBinary.run(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.lastErrorLine == message, "\(arguments)")
        }
    }

    /// The raw-argv UTF-8 check names short options too.
    @Test func invalidUTF8AfterAShortOptionIsNamed() throws {
        let world = try CLIWorld(password: nil)
        for (script, named) in [
            (#""$0" add -s api -a "$(printf 'a\377')""#, "the value after '-a'"),
            (#""$0" add -s api "-a$(printf 'a\377')""#, "the value of '-a'"),
        ] {
            let result = try HardeningTests.runRaw(world, script)
            #expect(result.status == 2, "\(script)")
            #expect(result.lastErrorLine.hasPrefix("keygate: \(named) is not valid UTF-8: "), "\(result.lastErrorLine)")
        }
    }

    /// Every help shows `-s, --service S` with a value name (never `VALUE`), and the
    /// descriptions of one help start in one column.
    @Test(arguments: [[]] + DocumentationCoverage.commandNames().map { [$0] })
    func helpLinesNameValuesAndAlign(command: [String]) throws {
        let text = try KeygateBinary.run(command + ["--help"]).stdoutText
        #expect(!text.contains("VALUE"), "\(command)")
        let lines = text.split(separator: "\n").filter { $0.hasPrefix("  -") || $0.hasPrefix("      --") }
        let columns = Set(
            lines.compactMap { line -> Int? in
                guard let gap = line.range(of: #"\S  +\S"#, options: .regularExpression) else { return nil }
                return line.distance(from: line.startIndex, to: gap.upperBound) - 1
            })
        #expect(columns.count <= 1, "\(command): \(lines)")
        if ["add", "get", "update", "delete", "list"].contains(command.first ?? "") {
            #expect(text.contains("  -s, --service S "))
            #expect(text.contains("  -a, --account A "))
            #expect(text.contains("  -g, --access-group G "))
        }
    }
}
