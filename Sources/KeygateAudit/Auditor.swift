import Glibc
public import KeygatePolicy

/// Writes audit events for the engine: fills in who asked, redacts account names when
/// configured, and enforces the failure policy.
///
/// When ``isRequired`` (the CLI's default), a record that cannot be written makes the
/// decision it describes a denial: ``record(_:)`` throws `errSecIO`, and the caller must not
/// go ahead. Otherwise the failure is ignored.
public struct Auditor: Sendable {
    /// Where records go.
    public let sink: any AuditSink
    /// Whether a decision whose record cannot be written is denied.
    public let isRequired: Bool
    /// When set, account names are replaced by `hmac-sha256:<hex>` under this key, as Vault
    /// does, for trails shipped off the host.
    public let redactionKey: [UInt8]?
    /// The process recorded in every event.
    public let processID: Int32
    /// The user recorded in every event.
    public let userID: UInt32
    /// The executable recorded in every event, when given.
    public let executable: String?
    /// Where record times come from.
    public let clock: any KeygateClock

    /// An auditor.
    /// - Parameters:
    ///   - sink: where records go.
    ///   - isRequired: whether a decision whose record cannot be written is denied.
    ///   - redactionKey: when set, account names are replaced by their HMAC under this key.
    ///   - processID: the pid recorded; nil (the default) records this process's.
    ///   - userID: the uid recorded; nil (the default) records this process's effective uid.
    ///   - executable: the program recorded in every event (`exe`), when given.
    ///   - clock: where record times come from.
    public init(
        sink: any AuditSink, isRequired: Bool = true, redactionKey: [UInt8]? = nil, processID: Int32? = nil,
        userID: UInt32? = nil, executable: String? = nil, clock: any KeygateClock = SystemClock()
    ) {
        self.sink = sink
        self.isRequired = isRequired
        self.redactionKey = redactionKey
        // The engine's only libc calls: who this process is, for records that say who asked.
        self.processID = processID ?? getpid()
        self.userID = userID ?? geteuid()
        self.executable = executable
        self.clock = clock
    }

    /// Records `event`.
    /// - Throws: `errSecIO` naming the problem when the record cannot be written and auditing is required.
    public func record(_ event: AuditEvent) throws(KeygateError) {
        var event = event
        event.processID = processID
        event.userID = userID
        event.executable = executable
        if let key = redactionKey, let item = event.item {
            let redacted = "hmac-sha256:" + AuditCrypto.hmacSHA256Hex(Array(item.account.utf8), key: key)
            event.item?.account = redacted
            // Messages in the reasons (a store error naming the item) must not give the name away either.
            if !item.account.isEmpty {
                event.reasons = event.reasons.map { $0.replacing(item.account, with: redacted) }
            }
        }
        do {
            try sink.append(event, at: clock.now())
        } catch {
            guard isRequired else { return }
            throw KeygateError(
                .io, "the audit record could not be written, so the \(event.kind.rawValue) was denied: \(error.message)"
            )
        }
    }
}
