internal import CSystemd
import Glibc
import Synchronization

/// The lock state of this process's login session, asked of logind over D-Bus in process (on
/// the wire for a plain `unix:path=` bus, without loading libsystemd; through sd-bus for any
/// other address) and with a short deadline: no subprocess, and a bus that never answers costs
/// at most ``timeoutMicroseconds``.
enum LogindSession {
    /// What logind said.
    enum LockState: Equatable {
        /// No `XDG_SESSION_ID`, no system bus, or no logind that knows the session.
        case noSession
        /// logind knows the session and its `LockedHint` is false.
        case unlocked
        /// logind knows the session and its `LockedHint` is true.
        case locked
        /// The bus was there but the answer was not (a timeout, an error reply, a bad reply):
        /// the caller fails closed. The text names the failure, never a secret.
        case unreadable(String)
    }

    /// The whole question (connect, authenticate, call) ends within this by default: 250 ms.
    static let timeoutMicroseconds: UInt64 = 250_000

    /// Where the system bus is when `DBUS_SYSTEM_BUS_ADDRESS` is unset (sd-bus's default).
    static let defaultSystemBusAddress = "unix:path=/run/dbus/system_bus_socket"

    /// D-Bus error replies that mean "no logind, or a logind that does not know the session".
    static let noSessionErrors: Set<String> = [
        "org.freedesktop.DBus.Error.ServiceUnknown",
        "org.freedesktop.DBus.Error.NameHasNoOwner",
        "org.freedesktop.DBus.Error.UnknownObject",
        "org.freedesktop.login1.NoSuchSession",
        "org.freedesktop.systemd1.NoSuchUnit",
        "org.freedesktop.systemd1.UnitMasked",
    ]

    /// The bus's replies when it could not start logind (a system bus in a container without
    /// systemd, whose logind service file runs `/bin/false`): no logind either.
    static let activationFailurePrefix = "org.freedesktop.DBus.Error.Spawn."

    /// The session of `sources` and its bus; nil outside a session.
    static func target(_ sources: DeviceSources) -> (session: String, address: String)? {
        guard let session = sources.session else { return nil }
        return (session, sources.busAddress)
    }

    /// The lock state of the session and bus of `sources`.
    static func lockState(sources: DeviceSources, timeout: UInt64 = timeoutMicroseconds) -> LockState {
        guard let (session, address) = target(sources) else { return .noSession }
        return lockState(session: session, address: address, timeout: timeout)
    }

    /// The lock state of `session` as the logind on the bus at `address` sees it, within
    /// `timeout` microseconds: on the wire for a plain `unix:path=` bus
    /// (``LogindWireQuestion``), else through sd-bus.
    static func lockState(session: String, address: String, timeout: UInt64 = timeoutMicroseconds) -> LockState {
        guard let socketPath = BusAddress.socketPath(address) else {
            var answer = keygate_logind_answer()
            let result = keygate_logind_locked_hint(address, session, timeout, &answer)
            if result == 0 { return answer.locked != 0 ? .locked : .unlocked }
            let errorName = withUnsafeBytes(of: &answer.error_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            return lockState(failure: errorName.isEmpty ? .system(-result) : .errorReply(errorName))
        }
        return lockState { () throws(DBusWireError) -> Bool in
            try LogindWireQuestion.ask(
                socketPath: socketPath, session: session, deadline: LogindWireQuestion.now() + timeout
            ).answer()
        }
    }

    /// The lock state `question` answers.
    fileprivate static func lockState(_ question: () throws(DBusWireError) -> Bool) -> LockState {
        do {
            return try question() ? .locked : .unlocked
        } catch {
            return lockState(failure: error)
        }
    }

    /// What a failed question means: no session when there is no bus socket or logind does not
    /// know the session; otherwise unreadable (the caller fails closed).
    fileprivate static func lockState(failure: DBusWireError) -> LockState {
        switch failure {
        case .system(ENOENT): return .noSession
        case .errorReply(let name) where noSessionErrors.contains(name) || name.hasPrefix(activationFailurePrefix):
            return .noSession
        case .errorReply(let name):
            return .unreadable("cannot read the login session's lock state from logind (\(name))")
        default:
            let reason = String(cString: strerror(failure.errno))
            return .unreadable("cannot read the login session's lock state from logind (\(reason))")
        }
    }
}

extension LogindSession {
    /// A lock-state question sent ahead of need: connected and written when made, so the bus and
    /// logind answer while the process opens its store, and read by ``take(session:address:timeout:)``
    /// when the state is needed. Only a plain `unix:path=` bus is asked ahead. The answer is used
    /// once, only for the same session on the same bus, and only when the question is younger
    /// than the caller's timeout: it never says more than the timeout (250 ms) about the past.
    final class Question: Sendable {
        /// The session and bus address asked about.
        let session: String
        let address: String
        private let askedAt: UInt64
        /// The question on the wire, or why it could not be sent; nil once taken or forgotten.
        private let pending: Mutex<Result<LogindWireQuestion, DBusWireError>?>

        private init(
            session: String, address: String, askedAt: UInt64, question: Result<LogindWireQuestion, DBusWireError>
        ) {
            self.session = session
            self.address = address
            self.askedAt = askedAt
            pending = Mutex(question)
        }

        /// Sends the question for the session of `sources` on its bus, connecting and writing
        /// within `timeout` µs; nil without a session, or for a bus that cannot be asked ahead
        /// (any but a plain `unix:path=` bus). A question that could not be sent (no bus socket)
        /// is kept: its failure is the answer.
        static func ask(sources: DeviceSources, timeout: UInt64 = timeoutMicroseconds) -> Question? {
            guard let (session, address) = target(sources), let socketPath = BusAddress.socketPath(address) else {
                return nil
            }
            let askedAt = LogindWireQuestion.now()
            let question = Result { () throws(DBusWireError) -> LogindWireQuestion in
                try LogindWireQuestion.ask(socketPath: socketPath, session: session, deadline: askedAt + timeout)
            }
            return Question(session: session, address: address, askedAt: askedAt, question: question)
        }

        /// The answer for `session` on the bus at `address`, the first time it is asked for and
        /// while the question is younger than `timeout` µs, read within `timeout` µs from now;
        /// nil otherwise (the caller asks afresh).
        func take(session: String, address: String, timeout: UInt64) -> LockState? {
            guard session == self.session, address == self.address else { return nil }
            guard
                let question = pending.withLock({ pending in
                    defer { pending = nil }
                    return pending
                })
            else { return nil }
            let now = LogindWireQuestion.now()
            guard now < askedAt + timeout else { return nil }
            return LogindSession.lockState { () throws(DBusWireError) -> Bool in
                let wire = try question.get()
                // What arrives from now on is no older than the question: read with a full timeout.
                wire.deadline = now + timeout
                return try wire.answer()
            }
        }
    }

    /// The answer `question` holds for the session and bus of `sources` (see
    /// ``Question/take(session:address:timeout:)``), else the lock state asked now.
    static func lockState(sources: DeviceSources, askedAhead question: Question?, timeout: UInt64) -> LockState {
        guard let (session, address) = target(sources) else { return .noSession }
        if let answer = question?.take(session: session, address: address, timeout: timeout) { return answer }
        return lockState(session: session, address: address, timeout: timeout)
    }
}
