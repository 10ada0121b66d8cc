import Glibc
import KeygateLinux
import KeygatePolicy
import KeygateStore

/// `--store`, `--policies` and `--audit`: where the items, the organisation policies and the
/// audit trail are.
struct StoreOptions: Sendable {
    static let store = OptionSpec(
        "store", .path("PATH"), help: "the item database (default: $XDG_DATA_HOME/keygate/items.db)")
    static let policies = OptionSpec("policies", .path("DIR"), help: "directory of organisation policy files")
    static let audit = OptionSpec("audit", .path("PATH"), help: "the audit trail (default: next to the store)")
    static let options = [store, policies, audit]

    /// `--store`, absolute, or nil for the default.
    var store: String?
    /// `--policies`, absolute, or nil for the default directories.
    var policies: String?
    /// `--audit`, absolute, or nil for the trail beside the store.
    var audit: String?

    /// Reads the group's options.
    init(_ arguments: ParsedArguments) {
        store = arguments.path(Self.store)
        policies = arguments.path(Self.policies)
        audit = arguments.path(Self.audit)
    }

    /// The paths of this invocation, worked out once (``StorePaths``).
    func paths() throws(KeygateError) -> StorePaths {
        try StorePaths(store: store, audit: audit)
    }
}

/// Where the store, its audit trail and the user's failure counters are: the one place the CLI
/// works these paths out.
struct StorePaths: Sendable, Equatable {
    /// The database: `--store`, else `$XDG_DATA_HOME/keygate/items.db`.
    let store: String
    /// The audit trail: `--audit`, else `audit.jsonl` beside the store.
    let audit: String
    /// Where the user's failure counters live: the default data directory (the same for every
    /// store), else beside the store.
    let ledgerDirectory: String

    /// The paths for the options given (nil: the default).
    /// - Throws: `errSecNotAvailable` when no store is named and neither `XDG_DATA_HOME` nor
    ///   `HOME` gives a default.
    init(store: String?, audit: String?) throws(KeygateError) {
        if let store {
            self.store = store
        } else {
            self.store = try SQLiteItemStore.defaultPath()
        }
        let directory = Self.directory(of: self.store)
        self.audit = audit ?? directory + "/audit.jsonl"
        ledgerDirectory = (try? SQLiteItemStore.defaultDirectory()) ?? directory
    }

    /// The user's failure ledger, its directory created (0700) when missing; a ledger that
    /// cannot be used (it then counts as a lockout) is reported on `console` as a warning
    /// naming the file and what is wrong.
    func ledger(reportingTo console: Console) -> FileAttemptLedger {
        Self.makeDirectories(ledgerDirectory)
        return FileAttemptLedger(directory: ledgerDirectory) { console.err("keygate: warning: \($0)") }
    }

    /// Creates `directory` and its missing parents, each 0700 (best effort: the ledger reports
    /// what it then cannot open). With `mkdir`, not `FileManager`: a `get` never sets up
    /// FileManager or the metadata of its attribute dictionary. The directory itself is tried
    /// first: when it exists, or only it was missing, that is one `mkdir` instead of one per
    /// component.
    static func makeDirectories(_ directory: String) {
        if directory.hasPrefix("/") {
            if mkdir(directory, 0o700) == 0 {
                chmod(directory, 0o700)
                return
            }
            if errno == EEXIST { return }
        }
        var current = ""
        for part in directory.utf8.split(separator: UInt8(ascii: "/")) {
            current += "/" + String(decoding: part, as: UTF8.self)
            if mkdir(current, 0o700) == 0 { chmod(current, 0o700) }
        }
    }

    /// `path` without its last component (`/a/b` gives `/a`, `/b` gives `/`).
    static func directory(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }
}
