import Keygate
import KeygatePolicy

/// `keygate policy test FILE.json…`: runs policy test files.
struct PolicyTestCommand: Command {
    static let configuration = PolicyCommand.subcommand(
        "test", summary: "run policy test files", maximumPositionals: nil)

    /// The test files, absolute.
    let files: [String]

    init(parsing arguments: ParsedArguments) {
        files = arguments.positionals.map(ParsedArguments.absolute)
    }

    func validate() throws(UsageError) {
        guard !files.isEmpty else { throw UsageError("missing test file") }
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        var failed = 0
        var passed = 0
        for path in files {
            let file: PolicyTestFile
            let set: PolicySet
            do throws(KeygateError) {
                (file, set) = try Self.load(path)
            } catch {
                return context.console.refuse(error)
            }
            for testCase in file.cases {
                if let problem = testCase.check(in: set) {
                    failed += 1
                    context.console.out("FAIL \(path): \(problem)")
                } else {
                    passed += 1
                    context.console.out("PASS \(path): \(testCase.name)")
                }
            }
        }
        context.console.out("\(passed) passed, \(failed) failed")
        return failed == 0 ? .success : .failure
    }

    /// The test file at `path` (a regular file of at most 1 MiB, read without blocking) and
    /// the policies it names (relative to its directory).
    /// - Throws: `errSecParam` naming the file, and the line, column and field of a bad value
    ///   (an unknown key is one), when it cannot be read or decoded, or a policy it names is
    ///   broken.
    static func load(_ path: String) throws(KeygateError) -> (PolicyTestFile, PolicySet) {
        let file: PolicyTestFile
        do throws(InputFileError) {
            file = try PolicyTestFile(parsing: InputFile.text(path, limit: InputFile.contextLimit), file: path)
        } catch {
            throw KeygateError(.param, error.description)
        }
        let base = StorePaths.directory(of: path)
        return (file, try PolicyDirectory.load(file.policies.map { $0.hasPrefix("/") ? $0 : base + "/" + $0 }))
    }
}
