import Foundation
import KeygateLinux
import KeygatePolicy
import Testing

/// The lock-state question sent ahead of need (`LinuxDevice.askLockState`, what the CLI does
/// before it opens the store): the first snapshot reads the answer the bus gave then, later ones
/// ask afresh, an answer older than the timeout is never used, and a device in another mode
/// sends nothing.
@Suite(.serialized) struct LockStateAskedAheadTests {
    static func device(
        _ asked: LinuxDevice.AskedLockState, environment: [String: String], warnings: LogindLockStateTests.Warnings,
        timeout: Duration = .seconds(5)
    ) -> LinuxDevice {
        LinuxDevice(
            mode: .logind, environment: environment, logindTimeout: timeout, onWarning: warnings.record,
            askedAhead: asked)
    }

    /// Session 1, locked, asked about ahead with `timeout`; `waited` seconds later (the answer
    /// on its way) the bus goes away.
    static func askedThenBusGone(timeout: Duration, waited: Double) throws -> (
        asked: LinuxDevice.AskedLockState, environment: [String: String]
    ) {
        let bus = try PrivateSystemBus()
        defer { bus.stop() }
        try bus.startLogind(sessions: ["1": "true"])
        let environment = ["XDG_SESSION_ID": "1", "DBUS_SYSTEM_BUS_ADDRESS": bus.address]
        let asked = LinuxDevice.askLockState(mode: .logind, environment: environment, logindTimeout: timeout)
        Thread.sleep(forTimeInterval: waited)
        return (asked, environment)
    }

    @Test func theFirstSnapshotReadsTheAnswerGivenWhenItWasAskedAndTheNextAsksAfresh() throws {
        let (asked, environment) = try Self.askedThenBusGone(timeout: .seconds(5), waited: 0.5)
        let warnings = LogindLockStateTests.Warnings()
        let device = Self.device(asked, environment: environment, warnings: warnings)
        // Asked now, with no bus socket left, the answer would be "no session" (unlocked).
        #expect(device.snapshot(readingBiometry: false).device.isLocked == true)
        #expect(device.snapshot(readingBiometry: false).device.isLocked == false)
        #expect(warnings.all.isEmpty)
    }

    @Test func anAnswerOlderThanTheTimeoutIsNotUsed() throws {
        let (asked, environment) = try Self.askedThenBusGone(timeout: .milliseconds(300), waited: 0.6)
        let warnings = LogindLockStateTests.Warnings()
        let device = Self.device(asked, environment: environment, warnings: warnings, timeout: .milliseconds(300))
        #expect(device.snapshot(readingBiometry: false).device.isLocked == false)
        #expect(warnings.all.isEmpty)
    }

    @Test func aQuestionAboutAnotherSessionOrOlderThanTheDevicesTimeoutIsNotUsed() throws {
        let bus = try PrivateSystemBus()
        defer { bus.stop() }
        try bus.startLogind(sessions: ["1": "true"])
        let asked = LinuxDevice.askLockState(
            mode: .logind, environment: ["XDG_SESSION_ID": "1", "DBUS_SYSTEM_BUS_ADDRESS": bus.address],
            logindTimeout: .seconds(5))
        Thread.sleep(forTimeInterval: 0.5)
        let warnings = LogindLockStateTests.Warnings()
        // Session 2, which logind does not know: asked afresh, no session (unlocked).
        let other = Self.device(
            asked, environment: ["XDG_SESSION_ID": "2", "DBUS_SYSTEM_BUS_ADDRESS": bus.address], warnings: warnings)
        #expect(other.snapshot(readingBiometry: false).device.isLocked == false)
        // The same session, but a device that allows an answer only 300 ms old: asked afresh,
        // with the bus gone, no session.
        let asked2 = LinuxDevice.askLockState(
            mode: .logind, environment: ["XDG_SESSION_ID": "1", "DBUS_SYSTEM_BUS_ADDRESS": bus.address],
            logindTimeout: .seconds(5))
        Thread.sleep(forTimeInterval: 0.5)
        bus.stop()
        let strict = Self.device(
            asked2, environment: ["XDG_SESSION_ID": "1", "DBUS_SYSTEM_BUS_ADDRESS": bus.address], warnings: warnings,
            timeout: .milliseconds(300))
        #expect(strict.snapshot(readingBiometry: false).device.isLocked == false)
        #expect(warnings.all.isEmpty)
    }

    @Test func aQuestionThatFailedIsAnsweredAsTheSameQuestionAskedLaterWouldBe() throws {
        // A bus that refuses the handshake: fail closed, with the warning, at the first snapshot.
        let bus = try ScriptedBus(
            until: "LockedHint", replies: [Array("REJECTED EXTERNAL\r\n".utf8)])
        let environment = ["XDG_SESSION_ID": "1", "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(bus.path)"]
        let asked = LinuxDevice.askLockState(mode: .logind, environment: environment, logindTimeout: .seconds(5))
        let warnings = LogindLockStateTests.Warnings()
        let device = Self.device(asked, environment: environment, warnings: warnings)
        #expect(device.snapshot(readingBiometry: false).device.isLocked == true)
        #expect(warnings.all.count == 1)
        #expect(warnings.all.first?.contains("(Permission denied)") == true)
        #expect(warnings.all.first?.hasSuffix("the device counts as locked") == true)
    }

    @Test func aDeviceInAnotherModeSendsNothing() throws {
        let bus = try ScriptedBus(until: "LockedHint", replies: [])
        let environment = ["XDG_SESSION_ID": "1", "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(bus.path)"]
        for mode in [LinuxDevice.Mode.unlocked, .locked] {
            let asked = LinuxDevice.askLockState(mode: mode, environment: environment)
            let device = LinuxDevice(mode: mode, environment: environment, askedAhead: asked)
            #expect(device.snapshot(readingBiometry: false).device.isLocked == (mode == .locked))
        }
        Thread.sleep(forTimeInterval: 0.2)
        #expect(!bus.wasConnectedTo)
    }
}
