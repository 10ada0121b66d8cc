import Foundation
import Glibc
import KeygateDBus
import Testing

/// The bus connection the Secret Service frontend serves on, against a real `dbus-daemon` and
/// a real client (python3-dbus): values of every kind cross both ways unchanged (bytes with NUL
/// and newline included), errors keep their D-Bus name, a name another connection owns is
/// refused, and the bus's credentials name the calling process.
@Suite(.serialized) struct DBusConnectionTests {
    /// A connection on `bus` owning `org.keygate.Test`, serving `/org/keygate/Test` on a thread
    /// of its own: `Echo` answers its arguments, `Fail` an `org.keygate.Test.Error.Refused`, and
    /// `WhoAmI` the caller's uid and pid as the bus gives them.
    static func serve(on bus: PrivateBus) throws -> DBusConnection {
        let connection = try DBusConnection(address: bus.address)
        try connection.requestName("org.keygate.Test", replacing: false)
        try connection.serve(under: "/org/keygate/Test") { [unowned connection] call throws(DBusFailure) in
            switch call.member {
            case "Echo":
                return call.arguments
            case "Fail":
                throw DBusFailure("org.keygate.Test.Error.Refused", "refused as asked")
            case "WhoAmI":
                let credentials = try connection.call(
                    "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                    member: "GetConnectionCredentials", [.string(call.sender)])
                var uid: UInt32 = 0
                var pid: UInt32 = 0
                for (key, value) in credentials.first?.dictionaryEntries ?? [] {
                    if key.text == "UnixUserID", case .uint32(let found) = value.unwrapped { uid = found }
                    if key.text == "ProcessID", case .uint32(let found) = value.unwrapped { pid = found }
                }
                return [.uint32(uid), .uint32(pid), .string(call.sender)]
            default:
                throw DBusFailure.unknownMethod(call.interface, call.member)
            }
        }
        let thread = Thread { try? connection.run() }
        thread.start()
        return connection
    }

    /// A private bus with the test service on it.
    static func served() throws -> (PrivateBus, DBusConnection) {
        let bus = try PrivateBus()
        return (bus, try serve(on: bus))
    }

    /// The start of every client: `bus` and `test`, the service's proxy.
    static let client = """
        import dbus, os
        bus = dbus.SessionBus()
        test = dbus.Interface(bus.get_object("org.keygate.Test", "/org/keygate/Test"), "org.keygate.Test")

        """

    @Test func valuesCrossBothWaysUnchanged() throws {
        let (bus, connection) = try Self.served()
        defer { connection.stop() }
        let result = try bus.python(
            Self.client
                + #"""
                secret = dbus.ByteArray(b"line one\nline\x00two\xff")
                props = dbus.Dictionary({"Label": dbus.String("a label"), "Count": dbus.UInt32(7)}, signature="sv")
                pair = dbus.Struct((dbus.ObjectPath("/a/b"), dbus.Array([], signature="y"), secret, "text/plain"))
                out = test.Echo(secret, props, pair, dbus.Boolean(True), dbus.Int64(-5), dbus.Array([dbus.ObjectPath("/x")], signature="o"), byte_arrays=True)
                assert bytes(out[0]) == b"line one\nline\x00two\xff", out[0]
                assert dict(out[1]) == {"Label": "a label", "Count": 7}, out[1]
                assert out[2][0] == "/a/b" and bytes(out[2][1]) == b"" and bytes(out[2][2]) == bytes(secret) and out[2][3] == "text/plain"
                assert out[3] == True and out[4] == -5 and list(out[5]) == ["/x"]
                print("round trip ok")
                """#)
        #expect(result.status == 0 && result.output.contains("round trip ok"), "\(result.output)")
    }

    @Test func anErrorReplyKeepsItsNameAndTheCallerIsTheBussView() throws {
        let (bus, connection) = try Self.served()
        defer { connection.stop() }
        let result = try bus.python(
            Self.client
                + #"""
                try:
                    test.Fail()
                    print("no error")
                except dbus.exceptions.DBusException as error:
                    print("error", error.get_dbus_name(), error.get_dbus_message())
                uid, pid, sender = test.WhoAmI()
                print("me", uid == os.getuid(), pid == os.getpid(), sender == bus.get_unique_name())
                try:
                    test.Nothing()
                except dbus.exceptions.DBusException as error:
                    print("unknown", error.get_dbus_name())
                """#)
        #expect(result.output.contains("error org.keygate.Test.Error.Refused refused as asked"), "\(result.output)")
        #expect(result.output.contains("me True True True"), "\(result.output)")
        #expect(result.output.contains("unknown org.freedesktop.DBus.Error.UnknownMethod"), "\(result.output)")
    }

    @Test func aNameAnotherConnectionOwnsIsRefused() throws {
        let bus = try PrivateBus()
        let connection = try Self.serve(on: bus)
        defer { connection.stop() }
        let second = try DBusConnection(address: bus.address)
        #expect(throws: DBusFailure.self) { try second.requestName("org.keygate.Test", replacing: false) }
        do {
            try second.requestName("org.keygate.Test", replacing: true)
            Issue.record("the name was taken from an owner that does not allow it")
        } catch {
            #expect(error.name == "org.freedesktop.DBus.Error.AddressInUse", "\(error)")
        }
    }

    @Test func aBusThatIsNotThereIsAClearFailure() throws {
        #expect(throws: DBusFailure.self) { _ = try DBusConnection(address: "unix:path=/nonexistent/bus") }
    }
}
