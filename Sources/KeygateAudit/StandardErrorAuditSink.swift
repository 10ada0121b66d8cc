import Glibc
public import KeygatePolicy
import Synchronization

/// Writes records to standard error, for debugging (its own chain, starting fresh each process).
public final class StandardErrorAuditSink: AuditSink {
    private let head = Mutex(AuditHead(genesis: AuditCrypto.random(32).hexString))

    /// Creates it.
    public init() {}

    /// Seals the event and writes its line to standard error.
    public func append(_ event: AuditEvent, at time: Timestamp) throws(KeygateError) -> AuditRecord {
        let record = head.withLock { $0.seal(event, at: time) }
        let bytes = Array(("audit: " + record.line + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw KeygateError(.io, "cannot write the audit record to standard error") }
        return record
    }
}

/// The identity of this process, for audit records.
public enum ProcessIdentity {
    /// This process's id.
    public static var processID: Int32 { getpid() }
    /// This process's effective user id.
    public static var userID: UInt32 { geteuid() }
}
