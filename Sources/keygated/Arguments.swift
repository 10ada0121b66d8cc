/// The pinned command line: `keygated --socket PATH --state-directory DIR [--config FILE]`.
struct Arguments: Equatable {
    var socket: String
    var stateDirectory: String
    var config: String?

    static let usage = "usage: keygated --socket PATH --state-directory DIR [--config FILE]"

    /// Parses `arguments` (without the program name); each option once, each path absolute.
    /// - Throws: ``StartupError`` naming the offending argument.
    init(_ arguments: [String]) throws(StartupError) {
        var values: [String: String] = [:]
        var index = 0
        while index < arguments.count {
            let option = arguments[index]
            guard ["--socket", "--state-directory", "--config"].contains(option) else {
                throw StartupError("unknown argument '\(option)'\n\(Self.usage)")
            }
            guard index + 1 < arguments.count else { throw StartupError("\(option) needs a value\n\(Self.usage)") }
            guard values[option] == nil else { throw StartupError("\(option) given twice") }
            let value = arguments[index + 1]
            guard value.hasPrefix("/") else { throw StartupError("\(option) must be an absolute path, not '\(value)'") }
            values[option] = value
            index += 2
        }
        guard let socket = values["--socket"], let state = values["--state-directory"] else {
            throw StartupError("--socket and --state-directory are required\n\(Self.usage)")
        }
        self.socket = socket
        self.stateDirectory = state
        self.config = values["--config"]
    }
}

/// Why the daemon refuses to start (printed on stderr; exit status 78, EX_CONFIG, or 64 for usage).
struct StartupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
