import Glibc
public import KeygatePolicy

/// Where an application's Keygate files live, following the XDG base directories:
///
/// | what | path |
/// |---|---|
/// | items, key, audit trail | `$XDG_DATA_HOME/<application>/` (else `~/.local/share/<application>/`) |
/// | proof records | `$XDG_RUNTIME_DIR/<application>/` (none without `XDG_RUNTIME_DIR`) |
/// | the user's failure ledger | `$XDG_DATA_HOME/keygate/`, shared by every application |
///
/// The `keygate` CLI is the application `keygate`. Each application gets its own store and
/// trail; the failure ledger is the user's, so no application escapes a lockout that another
/// started (spec §4.3: lockouts are system-wide).
public struct StandardPaths: Hashable, Sendable {
    /// The application's data directory.
    public let dataDirectory: String
    /// The application's runtime directory, nil without `XDG_RUNTIME_DIR`.
    public let runtimeDirectory: String?
    /// The user's failure ledger directory (shared by every application).
    public let ledgerDirectory: String

    /// The item database.
    public var store: String { dataDirectory + "/items.db" }
    /// The audit trail.
    public var auditTrail: String { dataDirectory + "/audit.jsonl" }

    /// The environment variables ``init(application:environment:)`` reads.
    public static let variables = ["XDG_DATA_HOME", "HOME", "XDG_RUNTIME_DIR"]

    /// The paths of `application` (a reverse-DNS name such as `com.example.app`, or `keygate`).
    /// - Throws: `errSecParam` for a name that is empty, `.` or `..`, has a `/` or a control
    ///   character; `errSecNotAvailable` when neither `XDG_DATA_HOME` nor `HOME` is an absolute path.
    public init(application: String, environment: [String: String] = ProcessEnvironment.current())
        throws(KeygateError)
    {
        guard !application.isEmpty, application != ".", application != "..", !application.contains("/"),
            !application.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else {
            throw KeygateError(.param, "'\(application)' cannot name an application directory")
        }
        let base: String
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            base = data
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            base = home + "/.local/share"
        } else {
            throw KeygateError(.notAvailable, "neither XDG_DATA_HOME nor HOME is an absolute path", condition: .noHome)
        }
        dataDirectory = base + "/" + application
        ledgerDirectory = base + "/keygate"
        runtimeDirectory = environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? $0 + "/" + application : nil }
    }
}

extension StandardPaths {
    /// The directory part of `path`, as `NSString.deletingLastPathComponent` gives it:
    /// `/a/b/c` is `/a/b`, `/c` is `/`, `c` is empty; trailing slashes are ignored.
    package static func directory(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        if slash == trimmed.startIndex { return "/" }
        return String(trimmed[..<slash])
    }

    /// `name` inside `directory` (one `/` between them; `name` alone when `directory` is empty).
    package static func joined(_ directory: String, _ name: String) -> String {
        if directory.isEmpty { return name }
        return directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// This user's home directory: `HOME`, else the passwd entry's.
    package static func homeDirectory() -> String {
        if let home = getenv("HOME"), home.pointee != 0 { return String(cString: home) }
        guard let entry = getpwuid(geteuid()), let directory = entry.pointee.pw_dir else { return "/" }
        return String(cString: directory)
    }
}
