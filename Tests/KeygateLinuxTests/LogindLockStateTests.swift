import Foundation
import KeygateLinux
import KeygatePolicy
import Testing

/// The logind lock state over D-Bus (sd-bus, in process), against a private `dbus-daemon` and a
/// mock `org.freedesktop.login1`: locked, unlocked, unknown session, no logind, no bus, and a
/// bus that never answers (fail closed, without hanging).
@Suite(.serialized) struct LogindLockStateTests {
    /// What a device told its `onWarning`.
    final class Warnings: @unchecked Sendable {
        private let lock = NSLock()
        private var recorded: [String] = []
        func record(_ warning: String) { lock.withLock { recorded.append(warning) } }
        var all: [String] { lock.withLock { recorded } }
    }

    /// The device's lock state for `session` on the bus at `address`, read on a thread of its
    /// own: nil when it has not returned within 10 s (a hang fails the test instead of stalling it).
    /// The lock state through a device asking `address`; the mock logind is given 5 s (a
    /// loaded CI machine must not turn a slow mock into "locked"), the silent bus the
    /// production deadline.
    static func isLocked(
        session: String?, address: String?, warnings: Warnings, timeout: Duration = .seconds(5)
    ) -> Bool? {
        var environment = ["PATH": "/nonexistent"]
        environment["XDG_SESSION_ID"] = session
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = address
        let device = LinuxDevice(
            mode: .logind, environment: environment, logindTimeout: timeout, onWarning: warnings.record)
        return OnThread.value(within: 10) { device.snapshot(readingBiometry: false).device.isLocked }
    }

    @Test func aSessionWhoseLockedHintIsTrueIsLocked() throws {
        let bus = try PrivateSystemBus()
        defer { bus.stop() }
        try bus.startLogind(sessions: ["1": "true", "c2": "false"])
        let warnings = Warnings()
        #expect(Self.isLocked(session: "1", address: bus.address, warnings: warnings) == true)
        #expect(warnings.all.isEmpty)
    }

    @Test func aSessionWhoseLockedHintIsFalseIsUnlocked() throws {
        let bus = try PrivateSystemBus()
        defer { bus.stop() }
        try bus.startLogind(sessions: ["1": "true", "c2": "false"])
        let warnings = Warnings()
        #expect(Self.isLocked(session: "c2", address: bus.address, warnings: warnings) == false)
        #expect(warnings.all.isEmpty)
    }

    @Test func aSessionLogindDoesNotKnowIsUnlocked() throws {
        let bus = try PrivateSystemBus()
        defer { bus.stop() }
        try bus.startLogind(sessions: ["1": "true"])
        let warnings = Warnings()
        #expect(Self.isLocked(session: "9", address: bus.address, warnings: warnings) == false)
        #expect(warnings.all.isEmpty)
    }

    @Test func aBusWithoutLogindIsUnlocked() throws {
        let bus = try PrivateSystemBus()
        defer { bus.stop() }
        let warnings = Warnings()
        #expect(Self.isLocked(session: "1", address: bus.address, warnings: warnings) == false)
        #expect(warnings.all.isEmpty)
    }

    @Test func aBusThatCannotStartLogindIsUnlocked() throws {
        let bus = try PrivateSystemBus(unstartableLogind: true)
        defer { bus.stop() }
        let warnings = Warnings()
        #expect(Self.isLocked(session: "1", address: bus.address, warnings: warnings) == false)
        #expect(warnings.all.isEmpty)
    }

    @Test func noBusSocketOrNoSessionIsUnlocked() {
        let warnings = Warnings()
        let missing = "unix:path=/nonexistent/keygate-\(UUID().uuidString)/bus"
        #expect(Self.isLocked(session: "1", address: missing, warnings: warnings) == false)
        #expect(Self.isLocked(session: nil, address: missing, warnings: warnings) == false)
        #expect(Self.isLocked(session: "", address: missing, warnings: warnings) == false)
        #expect(warnings.all.isEmpty)
    }

    @Test func anErrorReplyOrAReplyOfTheWrongTypeFailsClosed() throws {
        let bus = try PrivateSystemBus()
        defer { bus.stop() }
        try bus.startLogind(sessions: ["1": "error", "2": "yes"])
        let warnings = Warnings()
        #expect(Self.isLocked(session: "1", address: bus.address, warnings: warnings) == true)
        #expect(Self.isLocked(session: "2", address: bus.address, warnings: warnings) == true)
        #expect(warnings.all.count == 2)
        #expect(warnings.all.first?.contains("org.freedesktop.DBus.Error.AccessDenied") == true)
        #expect(warnings.all.allSatisfy { $0.hasSuffix("the device counts as locked") })
    }

    @Test func aBusThatNeverAnswersFailsClosedWithoutHanging() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "keygate-silent-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let silent = try SilentSocket(directory: directory)
        let warnings = Warnings()
        // nil would mean no answer within 10 s (sd-bus's own default is 25 s).
        #expect(
            Self.isLocked(
                session: "1", address: "unix:path=\(silent.path)", warnings: warnings, timeout: .milliseconds(250))
                == true)
        #expect(warnings.all.count == 1)
        #expect(warnings.all.first?.contains("timed out") == true)
    }
}
