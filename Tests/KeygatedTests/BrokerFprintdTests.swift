import Foundation
import Glibc
import Testing

/// With no `enrollment-file` (the shipped default), keygated asks fprintd about the caller's
/// enrolled fingers: the user name of the peer's kernel uid, never the daemon's own (root's),
/// so each user's `biometryCurrentSet` items are bound to that user's set.
/// (`PrivateSystemBus.swift` here is a link to KeygateLinuxTests' private bus and mock fprintd.)
@Suite struct BrokerFprintdTests {
    @Test func fprintdIsAskedAboutTheCallersFingersNotRoots() throws {
        let relay = try RelayFixture()
        let bus = try PrivateSystemBus()
        defer { bus.stop() }
        try bus.startFprintd(readers: [("Test Reader", "press", ["right-index-finger"])])
        relay.daemon.environment?["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        try relay.daemon.start()
        let added = try relay.daemon.probe(as: DaemonFixture.userA, "add", "bio", "any", "value", "biometryAny")
        #expect(added.lines == ["ok"], "\(added.output) \(relay.daemon.log)")
        let calls = ((try? String(contentsOfFile: bus.fprintdCalls, encoding: .utf8)) ?? "").split(separator: "\n")
        let asked = calls.filter { $0.hasPrefix("ListEnrolledFingers ") }
        let name = try #require(RelayFixture.names[DaemonFixture.userA])
        #expect(asked.contains("ListEnrolledFingers \(name)"), "\(calls)")
        #expect(!asked.contains("ListEnrolledFingers root"), "\(calls)")
    }
}
