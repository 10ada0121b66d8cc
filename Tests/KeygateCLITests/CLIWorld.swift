import Foundation
import KeygateTesting

/// A private world for one CLI test: its own data and runtime directories (so the store,
/// key, audit trail and reuse records are fresh), an unlocked device, and optionally PAM.
final class CLIWorld {
    let directory: TemporaryDirectory
    let pam: PAMWorld
    var extraEnvironment: [String: String] = [:]

    init(password: String? = "s3cret") throws {
        directory = try TemporaryDirectory()
        pam = try PAMWorld()
        if let password { try pam.matrixService("keygate", user: PAMWorld.currentUser(), password: password) }
        try FileManager.default.createDirectory(
            atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    var data: String { directory.url.appendingPathComponent("data").path }
    var runtime: String { directory.url.appendingPathComponent("run").path }
    var store: String { data + "/keygate/items.db" }
    var audit: String { data + "/keygate/audit.jsonl" }

    var environment: [String: String] {
        var env = pam.environment
        env["XDG_DATA_HOME"] = data
        env["XDG_RUNTIME_DIR"] = runtime
        env["XDG_CONFIG_HOME"] = directory.url.appendingPathComponent("config").path  // no user policies
        env["KEYGATE_DEVICE_STATE"] = "unlocked"
        env["KEYGATE_REUSE_SECONDS"] = nil
        env["XDG_SESSION_ID"] = "test-session"
        for (key, value) in extraEnvironment { env[key] = value }
        return env
    }

    /// Runs keygate in this world. A passphrase, when given, is fed on descriptor 3.
    func run(_ arguments: [String], stdin: Data = Data(), passphrase: String? = nil) throws -> KeygateBinary.Result {
        guard let passphrase else { return try KeygateBinary.run(arguments, stdin: stdin, environment: environment) }
        return try KeygateBinary.run(
            ["--passphrase-fd", "3"] + arguments, stdin: stdin, environment: environment,
            descriptor3: Data((passphrase + "\n").utf8))
    }

    func add(_ service: String, _ account: String, _ value: Data, _ extra: [String] = []) throws -> KeygateBinary.Result
    {
        try run(["add", "--service", service, "--account", account] + extra, stdin: value)
    }
}
