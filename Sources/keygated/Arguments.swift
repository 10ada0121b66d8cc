import Keygate
import KeygateProtocol

/// The pinned command line: `keygated --socket PATH --state-directory DIR [--config FILE]`.
struct Arguments: Equatable {
    var socket: String
    var stateDirectory: String
    var config: String?

    static let usage = "usage: keygated --socket PATH --state-directory DIR [--config FILE]"

    /// What `keygated --help` prints.
    static let help = """
        \(usage)
               keygated -V | --version        keygated -h | --help

        The Keygate broker: serves each local user's gated keychain items on a Unix socket, as root.
          --socket PATH            where to listen (ignored when systemd passes a socket)
          --state-directory DIR    every user's store, key, audit trail and lockout counter (root, 0700)
          --config FILE            keygated.conf: device-state, policies, limits and timeouts
        Exit status: 0 stopped by SIGTERM or SIGINT, 64 a bad command line, 78 a bad configuration.
        See keygated(8).
        """

    /// The daemon's version line (`keygated --version`, and the hello reply's daemon version).
    static let version = "keygated \(KeygateVersion.current) (protocol \(FrameLimits.version))"

    /// What to print instead of starting, for `--version`/`-V` or `--help`/`-h` given alone.
    static func informational(_ arguments: [String]) -> String? {
        switch arguments {
        case ["--version"], ["-V"]: version
        case ["--help"], ["-h"]: help
        default: nil
        }
    }

    /// Parses `arguments` (without the program name); each option once, each path absolute.
    /// - Throws: ``StartupError`` naming the offending argument.
    init(_ arguments: [String]) throws(StartupError) {
        var values: [String: String] = [:]
        var index = 0
        while index < arguments.count {
            let option = arguments[index]
            guard ["--socket", "--state-directory", "--config"].contains(option) else {
                throw StartupError("unknown argument '\(option)'\n\(Self.usage)", usage: true)
            }
            guard index + 1 < arguments.count else {
                throw StartupError("\(option) needs a value\n\(Self.usage)", usage: true)
            }
            guard values[option] == nil else { throw StartupError("\(option) given twice", usage: true) }
            let value = arguments[index + 1]
            guard value.hasPrefix("/") else {
                throw StartupError("\(option) must be an absolute path, not '\(value)'", usage: true)
            }
            values[option] = value
            index += 2
        }
        guard let socket = values["--socket"], let state = values["--state-directory"] else {
            throw StartupError("--socket and --state-directory are required\n\(Self.usage)", usage: true)
        }
        self.socket = socket
        self.stateDirectory = state
        self.config = values["--config"]
    }
}

/// Why the daemon refuses to start (printed on stderr; exit status 64, EX_USAGE, for the
/// command line, 78, EX_CONFIG, for everything else).
struct StartupError: Error, CustomStringConvertible {
    let description: String
    let exitStatus: Int32
    init(_ description: String, usage: Bool = false) {
        self.description = description
        self.exitStatus = usage ? 64 : 78
    }
}
