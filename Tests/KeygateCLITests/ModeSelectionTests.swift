import Foundation
import Glibc
import KeygateLinux
import KeygatePolicy
import KeygateProtocol
import KeygateTesting
import Testing

@testable import KeygateCLI

/// Which mode a command runs in (issue 15, point 5): `--daemon` / `--embedded`, else the daemon
/// exactly when `KEYGATE_SOCKET` names a socket; what daemon mode refuses and what it never reads.
@Suite struct ModeSelectionTests {
    /// A path holding a bound (not listening) Unix socket, in a directory removed with it.
    final class SocketFile {
        let directory: TemporaryDirectory
        let path: String
        private let descriptor: Int32

        init() throws {
            directory = try TemporaryDirectory()
            path = directory.url.path + "/keygated.sock"
            descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            let bound = UnixSocketAddress(path: path)?.bind(descriptor) ?? -1
            try #require(bound == 0, "bind failed: errno \(errno)")
        }

        deinit { close(descriptor) }
    }

    static func global(_ words: [String], _ variables: [String: String]) throws(UsageError) -> GlobalOptions {
        let arguments = try ParsedArguments(
            words[...] + ["get"], options: GlobalOptions.options, stopAtPositional: true)
        return try GlobalOptions(arguments, variables: EnvironmentVariables(variables), choosesMode: true)
    }

    @Test func theFlagsChooseAndCannotBeCombined() throws {
        let missing = "/nonexistent/keygated.sock"
        #expect(try Self.global(["--daemon"], ["KEYGATE_SOCKET": missing]).mode == .daemon(socket: missing))
        #expect(try Self.global(["--embedded"], ["KEYGATE_SOCKET": missing]).mode == .embedded)
        #expect(throws: UsageError("--daemon and --embedded cannot be used together")) {
            try Self.global(["--daemon", "--embedded"], [:])
        }
    }

    @Test func withoutAFlagTheSocketDecides() throws {
        let socket = try SocketFile()
        #expect(try Self.global([], ["KEYGATE_SOCKET": socket.path]).mode == .daemon(socket: socket.path))
        // --embedded wins over a socket that is there.
        #expect(try Self.global(["--embedded"], ["KEYGATE_SOCKET": socket.path]).mode == .embedded)
        // A regular file, a directory or nothing at the path: embedded.
        let file = socket.directory.url.path + "/not-a-socket"
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        for path in [file, socket.directory.url.path, socket.directory.url.path + "/missing"] {
            #expect(try Self.global([], ["KEYGATE_SOCKET": path]).mode == .embedded, "\(path)")
        }
    }

    @Test func theDefaultSocketIsTheSystemDaemons() throws {
        let options = try Self.global(["--daemon"], [:])
        #expect(options.mode == .daemon(socket: "/run/keygate/keygated.sock"))
        // An empty variable is the default, as if unset.
        #expect(try Self.global(["--daemon"], ["KEYGATE_SOCKET": ""]).modeOptions.socket == ModeOptions.defaultSocket)
    }

    @Test func commandsThatDoNotChooseRunEmbeddedAndNeverLookAtTheSocket() throws {
        let socket = try SocketFile()
        let arguments = try ParsedArguments(["evaluate"], options: GlobalOptions.options, stopAtPositional: true)
        let global = try GlobalOptions(arguments, variables: EnvironmentVariables(["KEYGATE_SOCKET": socket.path]))
        #expect(global.mode == .embedded)
        let item: [any CommandEntry.Type] = [
            StatusCommand.self, GetCommand.self, AddCommand.self, ListCommand.self, LockCommand.self,
        ]
        #expect(item.allSatisfy { $0.configuration.choosesMode })
        #expect(AuditCommand.configuration.choosesMode && GitCredentialCommand.configuration.choosesMode)
        #expect(!EvaluateCommand.configuration.choosesMode && !ProveCommand.configuration.choosesMode)
    }

    @Test func daemonModeRefusesEveryEmbeddedOnlyOptionNamingIt() throws {
        for (words, option) in [
            (["--store", "/tmp/x.db"], "--store"), (["--audit", "/tmp/a.jsonl"], "--audit"),
            (["--policies", "/tmp/p"], "--policies"), (["--device-state", "unlocked"], "--device-state"),
            (["--pam-service", "keygate-x"], "--pam-service"),
            (["--pam-biometry-service", "keygate-y"], "--pam-biometry-service"),
        ] {
            #expect(
                throws: UsageError(
                    "\(option) only applies to the embedded store; keygated keeps its own (use --embedded)"),
                "\(words)"
            ) { try Self.global(["--daemon"] + words, [:]) }
            // The same options are fine embedded.
            _ = try Self.global(["--embedded"] + words, [:])
        }
        // What daemon mode uses: the prompt answers, interaction and the reuse window.
        let global = try Self.global(
            ["--daemon", "--passphrase-fd", "3", "--no-interaction", "--reuse-seconds", "60"], [:])
        #expect(global.pam.passphraseDescriptor == 3 && global.pam.noInteraction && global.device.reuseSeconds == 60)
    }

    @Test func daemonModeNeverReadsTheDeviceStateVariable() throws {
        // Embedded, the variable steers the device (and a bad value is refused) ...
        #expect(try Self.global(["--embedded"], ["KEYGATE_DEVICE_STATE": "unlocked"]).device.mode == .unlocked)
        #expect(throws: UsageError.self) { try Self.global(["--embedded"], ["KEYGATE_DEVICE_STATE": "open"]) }
        // ... through the daemon it is not read at all.
        #expect(try Self.global(["--daemon"], ["KEYGATE_DEVICE_STATE": "unlocked"]).device.mode == .logind)
        #expect(try Self.global(["--daemon"], ["KEYGATE_DEVICE_STATE": "open"]).device.mode == .logind)
    }

    @Test func statusEmbeddedNamesTheModeTheStoreAndTheTrail() async throws {
        let directory = try TemporaryDirectory()
        let output = CapturedOutput(isTerminal: false)
        let errors = CapturedOutput(isTerminal: false)
        let environment = CommandEnvironment(
            output: output, errorOutput: errors, input: BytesInput(bytes: []),
            variables: EnvironmentVariables(["KEYGATE_SOCKET": directory.url.path + "/none.sock"]),
            keychains: .live)
        let store = directory.url.path + "/keygate/items.db"
        let status = await KeygateTool.run(["--store", store, "status"], in: environment)
        #expect(status == .success, "\(String(decoding: errors.bytes, as: UTF8.self))")
        let lines = String(decoding: output.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        // The pam line depends on this machine's /etc/pam.d (ProveCommandTests checks it).
        #expect(lines.count == 4 && lines[1].hasPrefix("pam:         "), "\(lines)")
        #expect(
            lines.enumerated().filter { $0.offset != 1 }.map(\.element) == [
                "mode:        embedded (no daemon socket at \(directory.url.path)/none.sock)",
                "store:       \(store)",
                "audit trail: \(directory.url.path)/keygate/audit.jsonl",
            ])
        // Nothing was created: status only names the paths.
        #expect(!FileManager.default.fileExists(atPath: directory.url.path + "/keygate"))
    }
}
