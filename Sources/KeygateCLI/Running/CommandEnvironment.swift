import Glibc
import KeygatePolicy

/// What a command runs against, injected so a test can run it in process: its standard
/// streams, its environment variables and the factory that opens its keychain.
struct CommandEnvironment: Sendable {
    /// Standard output.
    var output: any OutputTarget
    /// Standard error.
    var errorOutput: any OutputTarget
    /// Standard input.
    var input: any InputSource
    /// The environment variables (`KEYGATE_DEVICE_STATE`, `XDG_CONFIG_HOME`, …).
    var variables: EnvironmentVariables
    /// Opens the keychain an item command works on.
    var keychains: KeychainFactory

    /// The process's own: descriptors 0, 1 and 2, `getenv`, and the user's store through PAM.
    static let live = CommandEnvironment(
        output: DescriptorOutput(descriptor: 1), errorOutput: DescriptorOutput(descriptor: 2), input: StandardInput(),
        variables: .process, keychains: .live)

    /// Messages to this environment's standard output and error.
    var console: Console { Console(output: output, errorOutput: errorOutput) }
}

/// Environment variables, read by name.
struct EnvironmentVariables: Sendable {
    private let lookup: @Sendable (String) -> String?

    /// Variables looked up with `lookup`.
    init(_ lookup: @escaping @Sendable (String) -> String?) { self.lookup = lookup }

    /// Exactly `variables`, for a test.
    init(_ variables: [String: String]) { self.lookup = { variables[$0] } }

    /// The process's, through `getenv` (nothing is copied until a variable is asked for).
    static let process = EnvironmentVariables { name in getenv(name).map { String(cString: $0) } }

    /// The value of `name`, or nil when it is not set.
    subscript(_ name: String) -> String? { lookup(name) }
}

/// Everything a command's `run` sees: the global options and the environment.
struct CommandContext: Sendable {
    /// The global options, read before the command name.
    let global: GlobalOptions
    /// The streams, variables and keychain factory.
    let environment: CommandEnvironment

    /// Messages to the environment's standard output and error.
    var console: Console { environment.console }

    /// Opens the keychain for `accessGroup` (default `keygate`), runs `body` in it, and then,
    /// whether `body` succeeded or not, keeps the proofs it made for reuse.
    func withSession<Result>(
        accessGroup: String? = nil, _ body: (Session) async throws(KeygateError) -> Result
    ) async throws(KeygateError) -> Result {
        let session = try await environment.keychains.open(global, accessGroup ?? Session.defaultGroup, console)
        defer { session.finish() }
        return try await body(session)
    }
}
