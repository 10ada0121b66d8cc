import Foundation
import KeygateLinux
import KeygatePolicy
import Testing

/// The enrolled set from fprintd over D-Bus (sd-bus, in process), against a private `dbus-daemon`
/// and a mock `net.reactivated.Fprint`: only a non-empty set is biometry; no fprintd, no reader,
/// nothing enrolled, an error or silence is *biometry unavailable*, never "nothing enrolled"
/// (which would invalidate `biometryCurrentSet` items), and nothing hangs.
@Suite(.serialized) struct FprintdEnrollmentTests {
    /// The device's snapshot over the bus at `address` (no enrollment file), read on a thread of
    /// its own: nil when it has not returned within 10 s.
    static func snapshot(
        address: String, readingBiometry: Bool = true, user: UInt32? = nil, warnings: LogindLockStateTests.Warnings
    ) -> DeviceSnapshot? {
        let device = LinuxDevice(
            mode: .unlocked, environment: ["PATH": "/nonexistent", "DBUS_SYSTEM_BUS_ADDRESS": address],
            enrollmentUser: user, onWarning: warnings.record)
        return OnThread.value(within: 10) { device.snapshot(readingBiometry: readingBiometry) }
    }

    static func calls(_ bus: PrivateSystemBus) -> [String] {
        ((try? String(contentsOfFile: bus.fprintdCalls, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    @Test func enrolledFingersAreTheEnrolledSetWithTheHashFprintdListGave() throws {
        let bus = try PrivateSystemBus()
        defer { bus.stop() }
        try bus.startFprintd(readers: [
            ("Test Reader", "press", ["right-index-finger", "left-thumb"]), ("Other", "swipe", []),
        ])
        let warnings = LogindLockStateTests.Warnings()
        let snapshot = try #require(Self.snapshot(address: bus.address, warnings: warnings))
        #expect(snapshot.biometryAvailable)
        // The names `fprintd-list` printed ("Fingerprints for user U on Test Reader (press):"), so
        // items bound before keep their hash.
        let expected = EnrollmentSetHash(templateIDs: [
            "Test Reader (press):/right-index-finger", "Test Reader (press):/left-thumb",
        ])
        #expect(snapshot.enrollment == expected)
        #expect(warnings.all.isEmpty)
        let user = try #require(getpwuid(geteuid()).map { String(cString: $0.pointee.pw_name) })
        #expect(Self.calls(bus).contains("ListEnrolledFingers \(user)"))
    }

    /// keygated (root) makes the device with the caller's uid: fprintd is asked about that
    /// user's fingers, never the daemon's own (root's) set.
    @Test func fprintdIsAskedAboutTheGivenUserNotTheProcessOwner() throws {
        let bus = try PrivateSystemBus()
        defer { bus.stop() }
        try bus.startFprintd(readers: [("Test Reader", "press", ["right-index-finger"])])
        let warnings = LogindLockStateTests.Warnings()
        let other: UInt32 = geteuid() == 65534 ? 0 : 65534
        let name = try #require(getpwuid(other).map { String(cString: $0.pointee.pw_name) })
        let owner = try #require(getpwuid(geteuid()).map { String(cString: $0.pointee.pw_name) })
        let snapshot = try #require(Self.snapshot(address: bus.address, user: other, warnings: warnings))
        #expect(snapshot.biometryAvailable)
        let asked = Self.calls(bus).filter { $0.hasPrefix("ListEnrolledFingers ") }
        #expect(asked == ["ListEnrolledFingers \(name)"], "\(Self.calls(bus))")
        #expect(!asked.contains("ListEnrolledFingers \(owner)"))
        // A uid without a passwd entry is unavailable (with a warning), never someone else's set.
        let unknown = try #require(Self.snapshot(address: bus.address, user: 3_999_999_999, warnings: warnings))
        #expect(!unknown.biometryAvailable && unknown.enrollment == nil)
        #expect(warnings.all.contains { $0.contains("uid 3999999999") }, "\(warnings.all)")
    }

    @Test func nothingEnrolledNoReaderOrNoFprintdIsUnavailableWithoutAWarning() throws {
        for readers in [[("Test Reader", "press", [String]())], []] {
            let bus = try PrivateSystemBus()
            defer { bus.stop() }
            try bus.startFprintd(readers: readers)
            let warnings = LogindLockStateTests.Warnings()
            let snapshot = try #require(Self.snapshot(address: bus.address, warnings: warnings))
            #expect(!snapshot.biometryAvailable && snapshot.enrollment == nil, "\(readers)")
            #expect(warnings.all.isEmpty)
            #expect(Self.calls(bus).first == "GetDevices")
        }
        let bare = try PrivateSystemBus()
        defer { bare.stop() }
        let warnings = LogindLockStateTests.Warnings()
        let snapshot = try #require(Self.snapshot(address: bare.address, warnings: warnings))
        #expect(!snapshot.biometryAvailable && snapshot.enrollment == nil)
        let missing = try #require(
            Self.snapshot(address: "unix:path=/nonexistent/keygate-\(UUID().uuidString)/bus", warnings: warnings))
        #expect(!missing.biometryAvailable && missing.enrollment == nil)
        #expect(warnings.all.isEmpty)
    }

    @Test func anErrorReplyIsUnavailableWithAWarning() throws {
        let bus = try PrivateSystemBus()
        defer { bus.stop() }
        try bus.startFprintd(readers: [("Test Reader", "press", ["right-index-finger"])], answer: "error")
        let warnings = LogindLockStateTests.Warnings()
        let snapshot = try #require(Self.snapshot(address: bus.address, warnings: warnings))
        #expect(!snapshot.biometryAvailable && snapshot.enrollment == nil)
        #expect(warnings.all.count == 1)
        #expect(warnings.all.first?.contains("net.reactivated.Fprint.Error.Internal") == true)
        #expect(warnings.all.first?.hasSuffix("biometry is unavailable") == true)
    }

    @Test func anFprintdThatNeverAnswersIsUnavailableWithinTheDeadline() throws {
        let bus = try PrivateSystemBus()
        defer { bus.stop() }
        try bus.startFprintd(readers: [("Test Reader", "press", ["right-index-finger"])], answer: "silent")
        let warnings = LogindLockStateTests.Warnings()
        let started = ContinuousClock.now
        // nil would mean no answer within 10 s (sd-bus's own default is 25 s).
        let snapshot = try #require(Self.snapshot(address: bus.address, warnings: warnings))
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(!snapshot.biometryAvailable && snapshot.enrollment == nil)
        #expect(warnings.all.first?.contains("timed out") == true, "\(warnings.all)")
    }

    @Test func aSnapshotThatDoesNotNeedBiometryNeverAsksFprintd() throws {
        let bus = try PrivateSystemBus()
        defer { bus.stop() }
        try bus.startFprintd(readers: [("Test Reader", "press", ["right-index-finger"])])
        let warnings = LogindLockStateTests.Warnings()
        let snapshot = try #require(Self.snapshot(address: bus.address, readingBiometry: false, warnings: warnings))
        #expect(!snapshot.biometryAvailable && snapshot.enrollment == nil)
        #expect(Self.calls(bus).isEmpty)
        #expect(try #require(Self.snapshot(address: bus.address, warnings: warnings)).biometryAvailable)
        #expect(Self.calls(bus).first == "GetDevices")
    }
}
