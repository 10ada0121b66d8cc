/// Where a ``LinuxDevice`` reads the device's state: the logind session whose `LockedHint` is
/// the lock state, the system bus logind and fprintd answer on, and the enrollment file. Typed,
/// so a broker names its caller's session as the kernel gave it; ``init(environment:)`` reads the
/// variables for a process that describes itself (the CLI, an app).
public struct DeviceSources: Sendable, Equatable {
    /// The logind session (nil: none, which counts as unlocked).
    public var session: String?
    /// The system bus's address (nil: the system bus, ``LinuxDevice/defaultSystemBusAddress``).
    public var systemBus: String?
    /// The enrollment file, one template id a line (nil: fprintd is asked).
    public var enrollmentFile: String?

    /// Sources as given; an empty string counts as none.
    public init(session: String? = nil, systemBus: String? = nil, enrollmentFile: String? = nil) {
        self.session = session.flatMap { $0.isEmpty ? nil : $0 }
        self.systemBus = systemBus.flatMap { $0.isEmpty ? nil : $0 }
        self.enrollmentFile = enrollmentFile.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The sources `environment` names: `XDG_SESSION_ID`, `DBUS_SYSTEM_BUS_ADDRESS` and
    /// `KEYGATE_ENROLLMENT_FILE` (an empty value counts as unset).
    public init(environment: [String: String]) {
        self.init(
            session: environment["XDG_SESSION_ID"], systemBus: environment["DBUS_SYSTEM_BUS_ADDRESS"],
            enrollmentFile: environment["KEYGATE_ENROLLMENT_FILE"])
    }

    /// The environment variables ``init(environment:)`` reads.
    public static let variables = ["XDG_SESSION_ID", "DBUS_SYSTEM_BUS_ADDRESS", "KEYGATE_ENROLLMENT_FILE"]

    /// The bus logind and fprintd are asked on.
    var busAddress: String { systemBus ?? LogindSession.defaultSystemBusAddress }
}
