import Foundation
import Keygate
import KeygatePolicy
import KeygateStore
import KeygateTesting
import Synchronization
import Testing

@testable import KeygateCLI

/// The commands run in this process (issue 13, point 4): captured streams, injected
/// environment variables and a keychain in memory, no binary spawned.
@Suite struct InProcessCommandTests {
    // MARK: - Parsing

    @Test func parseErrorsNameTheOption() throws {
        for (words, message) in [
            (["--service"], "option '--service' needs a value"),
            (["-s", "api"], "missing required option '--account'"),
            (["-s", "api", "-a", "me", "--colour"], "unknown option '--colour'"),
            (["-s", "api", "-a", "me", "-x"], "unknown option '-x'"),
            (["-s", "api", "-a", "me", "extra"], "unexpected argument 'extra'"),
        ] {
            #expect(throws: ParseFailure.self, "\(words)") { try GetCommand.parse(words[...]) }
            do {
                _ = try GetCommand.parse(words[...])
            } catch {
                #expect(error.error.message == message, "\(words)")
                #expect(error.help == GetCommand.configuration.help)
            }
        }
    }

    @Test func requiredOptionsAreReadOnceIntoTypedProperties() throws {
        guard case .command(let parsed) = try GetCommand.parse(["-sapi", "--account=-me", "-g", "team"]),
            let get = parsed as? GetCommand
        else {
            Issue.record("get did not parse")
            return
        }
        #expect(get.item.service == "api")
        #expect(get.item.account == "-me")
        #expect(get.item.accessGroup == "team")
        #expect(get.prompt == nil)
    }

    @Test func theHelpListsTheDeclaredOptions() {
        let subcommands = AuditCommand.subcommands + PolicyCommand.subcommands
        for configuration in (KeygateTool.commands.map { $0.configuration } + subcommands.map { $0.configuration }) {
            let names = configuration.options.map(\.name) + configuration.options.compactMap(\.short).map { "-\($0)" }
            #expect(Set(names).count == names.count, "\(configuration.name) declares an option twice")
            for option in configuration.options {
                #expect(configuration.help.contains(option.helpLabel), "\(configuration.name) \(option.name)")
                #expect(!option.help.isEmpty)
            }
        }
        #expect(GetCommand.configuration.help.contains("-s, --service S       the item's service (required)"))
    }

    @Test func aSubcommandIsItsOwnType() throws {
        guard case .command(let repair) = try AuditCommand.parse(["--restart", "repair"]) else {
            Issue.record("audit repair did not parse")
            return
        }
        #expect((repair as? AuditRepairCommand)?.restartsAnchor == true)
        guard
            case .command(let explain) = try PolicyCommand.parse([
                "explain", "-s", "x", "-a", "y", "--operation", "read",
            ])
        else {
            Issue.record("policy explain did not parse")
            return
        }
        #expect((explain as? PolicyExplainCommand)?.request.action == .read)
        #expect(throws: ParseFailure.self) { try AuditCommand.parse(["show", "--restart"]) }
        #expect(throws: ParseFailure.self) {
            try PolicyCommand.parse(["explain", "-s", "x", "-a", "y", "--operation", "steal"])
        }
    }

    // MARK: - validate()

    @Test func validateRefusesWhatCannotRun() throws {
        let refusals: [(any CommandEntry.Type, [String], String)] = [
            (ImportCommand.self, [], "missing the backup FILE"),
            (GitCredentialCommand.self, ["get", "store"], "give one action: get, store or erase"),
            (GitCredentialCommand.self, [], "give one action: get, store or erase"),
            (PolicyCommand.self, ["test"], "missing test file"),
        ]
        for (entry, words, message) in refusals {
            guard case .command(let command) = try entry.parse(words[...]) else {
                Issue.record("\(words) did not parse")
                continue
            }
            #expect(throws: UsageError(message), "\(words)") { try command.validate() }
        }
        guard case .command(let fine) = try ImportCommand.parse(["old.backup"]) else { return }
        #expect(throws: Never.self) { try fine.validate() }
    }

    @Test func aRefusedCommandNeverRuns() async throws {
        let cli = try InProcessCLI()
        let result = await cli.run(["credential", "get", "store"], stdin: Array("protocol=https\nhost=x\n\n".utf8))
        #expect(result.status == .usage)
        #expect(result.stderr.hasPrefix("usage: keygate credential"))
        #expect(result.lastErrorLine == "keygate: give one action: get, store or erase (errSecParam -50)")
        #expect(cli.sessionsOpened == 0)
    }

    // MARK: - Running

    @Test func getWritesTheValueByteForByte() async throws {
        let cli = try InProcessCLI()
        let value: [UInt8] = [0, 1, 0xff, 0x0a, 0x41]
        #expect(await cli.run(["add", "-s", "api", "-a", "me"], stdin: value).status == .success)
        let piped = await cli.run(["get", "-s", "api", "-a", "me"])
        #expect(piped.status == .success)
        #expect(piped.stdout == value)
        #expect(piped.writes == 1, "written once, from the value's own buffer")
        let terminal = await cli.run(["get", "-s", "api", "-a", "me"], outputIsTerminal: true)
        #expect(terminal.stdout == value + [0x0a])
        #expect(terminal.writes == 2, "the newline is written after the value, never appended to a copy")
    }

    @Test func listPrintsAttributesNeverValues() async throws {
        let cli = try InProcessCLI()
        #expect(
            await cli.run(["add", "-s", "api", "-a", "me", "--label", "L"], stdin: Array("v4lue".utf8)).status
                == .success)
        #expect(await cli.run(["add", "-s", "caf\u{E9}", "-a", "you"], stdin: Array("other".utf8)).status == .success)
        let result = await cli.run(["list"])
        #expect(result.status == .success)
        let lines = result.stdoutText.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(result.stdoutText.contains(#""service": "api", "account": "me""#))
        #expect(result.stdoutText.contains(#""label": "L""#))
        #expect(result.stdoutText.contains(#""service": "caf\u00e9""#))
        #expect(!result.stdoutText.contains("v4lue") && !result.stdoutText.contains("other"))
        #expect(await cli.run(["list", "-s", "api"]).stdoutText.split(separator: "\n").count == 1)
        #expect(await cli.run(["list", "-s", "none"]).stdout.isEmpty)
    }

    /// Issue 10 point 2: `list` writes its lines in chunks of about 64 KiB, not one write per
    /// item, and every item still comes out once, on a line of its own.
    @Test func listWritesLinesInChunks() async throws {
        let cli = try InProcessCLI()
        let count = 600
        let padding = String(repeating: "p", count: 120)
        for index in 0..<count {
            let added = await cli.run(["add", "-s", "svc-\(index)-" + padding, "-a", "me"], stdin: [1])
            #expect(added.status == .success)
        }
        let result = await cli.run(["list"])
        #expect(result.status == .success)
        #expect(result.stdout.count > 65_536, "long enough for several chunks")
        #expect(result.stdout.last == 10)
        let lines = result.stdoutText.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == count)
        #expect(Set(lines).count == count)
        #expect(lines.allSatisfy { $0.hasPrefix("{") && $0.hasSuffix("}") })
        #expect(result.writes <= result.stdout.count / 65_536 + 1)
    }

    @Test func exitStatusesFollowTheStatus() async throws {
        let cli = try InProcessCLI()
        let missing = await cli.run(["get", "-s", "api", "-a", "me"])
        #expect(missing.status == .itemNotFound)
        #expect(
            missing.lastErrorLine.hasPrefix("keygate: ")
                && missing.lastErrorLine.hasSuffix("(errSecItemNotFound -25300)"))
        #expect(missing.stdout.isEmpty)
        #expect(await cli.run(["add", "-s", "api", "-a", "me"], stdin: [1]).status == .success)
        #expect(await cli.run(["add", "-s", "api", "-a", "me"], stdin: [2]).status == .duplicateItem)
        let flags = await cli.run(["add", "-s", "x", "-a", "y", "--access-control", "biometryAny,fingerprint"])
        #expect(flags.status == .param)
        #expect(flags.lastErrorLine.contains("'fingerprint'"))

        #expect(
            await cli.run(["add", "-s", "bank", "-a", "me", "--access-control", "devicePasscode"], stdin: [3]).status
                == .success)
        cli.authenticator.enqueue(.fail, for: .passcode)
        #expect(await cli.run(["get", "-s", "bank", "-a", "me"]).status == .authFailed)
        cli.authenticator.enqueue(.cancel, for: .passcode)
        #expect(await cli.run(["get", "-s", "bank", "-a", "me"]).status == .userCanceled)
        #expect(await cli.run(["get", "-s", "bank", "-a", "me"]).stdout == [3])
        cli.device.lock()
        #expect(await cli.run(["get", "-s", "api", "-a", "me"]).status == .interactionNotAllowed)
        #expect(await cli.run(["delete", "-s", "api", "-a", "me"]).status == .success)
        cli.device.unlock()
        #expect(await cli.run(["delete", "-s", "api", "-a", "me"]).status == .itemNotFound)
    }

    @Test func theEnvironmentIsInjected() async throws {
        let cli = try InProcessCLI()
        cli.variables["KEYGATE_DEVICE_STATE"] = "sideways"
        let result = await cli.run(["list"])
        #expect(result.status == .usage)
        #expect(
            result.lastErrorLine
                == "keygate: KEYGATE_DEVICE_STATE: unknown device state 'sideways' (expected logind, unlocked or locked)"
                + " (errSecParam -50)")
        cli.variables["KEYGATE_DEVICE_STATE"] = "unlocked"
        cli.variables["KEYGATE_REUSE_SECONDS"] = "300"
        let global = try GlobalOptions(
            ParsedArguments([], options: GlobalOptions.options), variables: EnvironmentVariables(cli.variables))
        #expect(global.device.reuseSeconds == AuthenticationState.maximumReuseSeconds)
    }

    /// Session 25, defect 5: a bad reuse time, from the variable or the option, is refused
    /// (exit 2) naming where it came from; above 300 it is refused, not clamped.
    @Test(arguments: [
        ([] as [String], "abc", "KEYGATE_REUSE_SECONDS needs a whole number of seconds from 0 to 300, not 'abc'"),
        ([], "100000", "KEYGATE_REUSE_SECONDS needs a whole number of seconds from 0 to 300, not '100000'"),
        ([], "-1", "KEYGATE_REUSE_SECONDS needs a whole number of seconds from 0 to 300, not '-1'"),
        (
            ["--reuse-seconds", "5000"], "10",
            "--reuse-seconds needs a whole number of seconds from 0 to 300, not '5000'"
        ),
        (["--reuse-seconds", "301"], nil, "--reuse-seconds needs a whole number of seconds from 0 to 300, not '301'"),
    ])
    func aBadReuseTimeNamesItsSource(_ options: [String], _ variable: String?, _ message: String) async throws {
        let cli = try InProcessCLI()
        cli.variables["KEYGATE_REUSE_SECONDS"] = variable
        let result = await cli.run(options + ["list"])
        #expect(result.status == .usage)
        #expect(result.lastErrorLine == "keygate: \(message) (errSecParam -50)")
    }

    @Test func aValueLargerThanTheLimitIsRefusedUnstored() async throws {
        let cli = try InProcessCLI()
        let result = await cli.run(
            ["add", "-s", "big", "-a", "me"],
            stdin: [UInt8](repeating: 7, count: ItemLimits.defaultMaximumValueLength + 1))
        #expect(result.status == .param)
        #expect(result.lastErrorLine.contains("larger than the limit of 16 MiB"))
        #expect(await cli.run(["list"]).stdout.isEmpty)
    }

    @Test func dockersHelperRunsInProcessWithItsOwnConventions() async throws {
        let cli = try InProcessCLI()
        let credential = #"{"ServerURL":"https://r.example","Username":"u","Secret":"s\"1"}"#
        #expect(await cli.run(["docker-credential", "store"], stdin: Array(credential.utf8)).status == .success)
        let got = await cli.run(["docker-credential", "get"], stdin: Array(" https://r.example\n".utf8))
        #expect(got.status == .success)
        #expect(got.stdoutText.hasSuffix(#","Username":"u","Secret":"s\"1"}"# + "\n"))
        #expect(await cli.run(["docker-credential", "list"]).stdoutText.contains(#""https://r.example": "u""#))
        let unknown = await cli.run(["docker-credential", "bogus"])
        #expect(unknown.status == .failure)
        #expect(unknown.stdoutText == "Unknown credential action `bogus`\n")
        let missing = await cli.run(["docker-credential", "get"], stdin: Array("https://other\n".utf8))
        #expect(missing.status == .failure)
        #expect(missing.stdoutText == DockerCredentialCommand.notFound + "\n")
        let usage = await cli.run(["docker-credential"])
        #expect(usage.status == .failure)
        #expect(usage.stdoutText.hasPrefix("usage: docker-credential-keygate"))
    }

    /// A policy test file is input like any other: a FIFO in its place is refused, never
    /// waited on (it was read with `FileManager.contents`, which blocks on a FIFO).
    @Test func aPolicyTestFIFOIsRefusedNotWaitedOn() async throws {
        let cli = try InProcessCLI()
        let fifo = cli.home.path + "/cases.tests.json"
        #expect(mkfifo(fifo, 0o600) == 0)
        let result = await cli.run(["policy", "test", fifo])
        #expect(result.status == .usage)
        #expect(result.lastErrorLine.contains("not a regular file"))
    }

    @Test func storePathsAreWorkedOutInOnePlace() throws {
        let paths = try StorePaths(store: "/srv/keys/items.db", audit: nil)
        #expect(paths.audit == "/srv/keys/audit.jsonl")
        #expect(try StorePaths(store: "/srv/keys/items.db", audit: "/log/a.jsonl").audit == "/log/a.jsonl")
        #expect(StorePaths.directory(of: "/items.db") == "/")
        #expect(StorePaths.directory(of: "/a/b/") == "/a")
        #expect(StorePaths.directory(of: "items.db") == "")
    }
}

// MARK: - The in-process world

/// A keychain in memory with a simulated device and a scripted authenticator, and a runner
/// that captures what a command writes.
final class InProcessCLI: @unchecked Sendable {
    let store = InMemoryItemStore()
    let device = SimulatedDevice()
    let authenticator = ScriptedAuthenticator()
    let home: TemporaryDirectory
    /// The variables commands see (no user policies: the configuration directory is empty).
    var variables: [String: String]
    private let opened = Mutex(0)

    init() throws {
        home = try TemporaryDirectory()
        variables = ["HOME": home.path, "XDG_CONFIG_HOME": home.path + "/config"]
    }

    /// How many sessions commands opened.
    var sessionsOpened: Int { opened.withLock { $0 } }

    struct Result {
        let status: KeygateCLI.ExitStatus
        let stdout: [UInt8]
        let stderr: String
        let writes: Int
        var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
        var lastErrorLine: String { stderr.split(separator: "\n").last.map(String.init) ?? "" }
    }

    func run(_ words: [String], stdin: [UInt8] = [], outputIsTerminal: Bool = false) async -> Result {
        let output = CapturedOutput(isTerminal: outputIsTerminal)
        let errors = CapturedOutput(isTerminal: false)
        let environment = CommandEnvironment(
            output: output, errorOutput: errors, input: BytesInput(bytes: stdin),
            variables: EnvironmentVariables(variables), keychains: factory)
        let status = await KeygateTool.run(words, in: environment)
        return Result(
            status: status, stdout: output.bytes, stderr: String(decoding: errors.bytes, as: UTF8.self),
            writes: output.writes)
    }

    private var factory: KeychainFactory {
        KeychainFactory { [self] _, accessGroup, _ in
            opened.withLock { $0 += 1 }
            let keychain = Keychain(
                store: store, accessGroups: Session.groups(for: accessGroup), authenticator: authenticator,
                device: device)
            return Session(keychain: keychain, context: AuthenticationContext(), accessGroup: accessGroup) {}
        }
    }
}

/// An output stream kept in memory.
final class CapturedOutput: OutputTarget {
    private let state = Mutex((bytes: [UInt8](), writes: 0))
    let isTerminal: Bool

    init(isTerminal: Bool) { self.isTerminal = isTerminal }

    func write(_ bytes: UnsafeRawBufferPointer) throws(KeygateError) {
        state.withLock {
            $0.bytes += bytes
            $0.writes += 1
        }
    }

    var bytes: [UInt8] { state.withLock { $0.bytes } }
    var writes: Int { state.withLock { $0.writes } }
}

/// Standard input from bytes, with the real input's limit.
struct BytesInput: InputSource {
    let bytes: [UInt8]
    var isTerminal: Bool { false }

    func read(limit: Int, what: String) throws(KeygateError) -> SecretData {
        guard bytes.count <= limit else { throw Self.tooLarge(what, limit: limit) }
        return SecretData(bytes: bytes)
    }
}
