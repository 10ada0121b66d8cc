import Testing

@testable import KeygateLinux

/// The D-Bus wire client's own marshalling and parsing (issue 28 point 4: the untrusted-input
/// parsing that was a C header, now Swift and tested alone): what it writes parses back, and
/// every malformed message a bus (or anyone able to speak on it) could send is refused, never
/// read past its bounds.
@Suite struct DBusWireTests {
    static let get = DBusMethodCall(
        destination: "org.freedesktop.login1", path: "/org/freedesktop/login1/session/_31",
        interface: "org.freedesktop.DBus.Properties", member: "Get",
        arguments: ["org.freedesktop.login1.Session", "LockedHint"])

    /// A METHOD_RETURN replying to `serial` with `body` of `signature`, in either byte order.
    static func reply(
        serial: UInt32, signature: String = "v", body: [UInt8] = [1, 98, 0, 0, 1, 0, 0, 0], big: Bool = false,
        type: UInt8 = 2, errorName: String? = nil
    ) -> [UInt8] {
        func u32(_ value: UInt32) -> [UInt8] {
            let little = [UInt8(value & 0xff), UInt8(value >> 8 & 0xff), UInt8(value >> 16 & 0xff), UInt8(value >> 24)]
            return big ? little.reversed() : little
        }
        var fields: [UInt8] = [5, 1, UInt8(ascii: "u"), 0] + u32(serial)
        if let errorName {
            fields += [4, 1, UInt8(ascii: "s"), 0] + u32(UInt32(errorName.utf8.count)) + Array(errorName.utf8) + [0]
            while fields.count % 8 != 0 { fields.append(0) }
        }
        fields += [8, 1, UInt8(ascii: "g"), 0, UInt8(signature.utf8.count)] + Array(signature.utf8) + [0]
        var message: [UInt8] = [big ? UInt8(ascii: "B") : UInt8(ascii: "l"), type, 0, 1]
        message += u32(UInt32(body.count)) + u32(7) + u32(UInt32(fields.count)) + fields
        while message.count % 8 != 0 { message.append(0) }
        return message + body
    }

    @Test func aCallWrittenParsesBackWithItsFieldsAndArguments() throws {
        let bytes = try #require(Self.get.bytes(serial: 2))
        #expect(bytes.prefix(4) == [UInt8(ascii: "l"), 1, 0, 1])
        #expect(bytes.count % 8 == 0 || bytes.count > 16)
        let parsed = try DBusIncomingMessage(bytes)
        #expect(parsed.type == 1)
        #expect(parsed.signature == "ss")
        // The body: two strings, each length, bytes and NUL, the second aligned to 4.
        let first = "org.freedesktop.login1.Session"
        #expect(Array(parsed.body.prefix(4)) == [UInt8(first.utf8.count), 0, 0, 0])
        #expect(Array(parsed.body[4..<(4 + first.utf8.count)]) == Array(first.utf8))
        #expect(parsed.body.count == 4 + first.utf8.count + 1 + 1 + 4 + "LockedHint".utf8.count + 1)
        let hello = try #require(
            DBusMethodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus", member: "Hello"
            ).bytes(serial: 1))
        #expect(try DBusIncomingMessage(hello).signature == "")
        #expect(try DBusIncomingMessage(hello).body.isEmpty)
    }

    @Test func aCallTooLongIsRefusedNotCut() {
        var call = Self.get
        call.path = "/" + String(repeating: "a", count: DBusMethodCall.maximumLength)
        #expect(call.bytes(serial: 2) == nil)
    }

    @Test(arguments: [false, true])
    func aReplyIsReadInEitherByteOrder(_ big: Bool) throws {
        let locked = try DBusIncomingMessage(
            Self.reply(serial: 2, body: big ? [1, 98, 0, 0, 0, 0, 0, 1] : [1, 98, 0, 0, 1, 0, 0, 0], big: big))
        #expect(locked.replySerial == 2)
        #expect(try locked.variantBoolean() == true)
        let error = try DBusIncomingMessage(
            Self.reply(serial: 2, signature: "s", body: [], big: big, type: 3, errorName: "org.x.Error.NoSuch"))
        #expect(error.type == 3 && error.errorName == "org.x.Error.NoSuch")
    }

    @Test func whatIsNoBooleanInAVariantIsABadMessage() throws {
        for body: [UInt8] in [[1, 98, 0, 0, 2, 0, 0, 0], [1, 115, 0, 0, 1, 0, 0, 0], [1, 98, 0], []] {
            let message = try DBusIncomingMessage(Self.reply(serial: 2, body: body))
            #expect(throws: DBusWireError.badMessage) { try message.variantBoolean() }
        }
        let notVariant = try DBusIncomingMessage(Self.reply(serial: 2, signature: "b"))
        #expect(throws: DBusWireError.badMessage) { try notVariant.variantBoolean() }
    }

    @Test func malformedMessagesAreRefused() {
        let good = Self.reply(serial: 2)
        var cases: [[UInt8]] = []
        cases.append(Array(good.dropLast()))  // shorter than it says
        cases.append(good + [0])  // longer than it says
        var endian = good
        endian[0] = UInt8(ascii: "x")
        cases.append(endian)
        var version = good
        version[3] = 2
        cases.append(version)
        var huge = good
        huge[12...15] = [0xff, 0xff, 0, 0]  // header fields longer than any message
        cases.append(huge)
        var fieldType = good
        fieldType[18] = UInt8(ascii: "x")  // a header field of a type the client does not read
        cases.append(fieldType)
        var variantLength = good
        variantLength[17] = 2  // a field's signature must be one type
        cases.append(variantLength)
        // A string field whose length runs past the header fields.
        let longString = Self.reply(serial: 2, type: 3, errorName: "e")
        var pastEnd = longString
        pastEnd[28] = 200
        cases.append(pastEnd)
        var unterminated = longString
        unterminated[33] = UInt8(ascii: "x")  // the NUL after "e"
        cases.append(unterminated)
        cases.append(Self.reply(serial: 2, signature: String(repeating: "s", count: 64)))
        for bytes in cases {
            #expect(throws: DBusWireError.badMessage, "\(bytes)") { try DBusIncomingMessage(bytes) }
        }
    }

    /// Random bytes, and random damage to a good reply, are refused or parsed: never read out
    /// of bounds (a trap would end the test process).
    @Test func randomBytesNeverReadOutOfBounds() {
        var generator = SystemRandomNumberGenerator()
        let good = Self.reply(serial: 2, type: 3, errorName: "org.freedesktop.login1.NoSuchSession")
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
                if bytes.count >= 4, round % 4 == 0 { bytes[0] = UInt8(ascii: "l"); bytes[3] = 1 }
            } else {
                bytes = good
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(
                        in: 0...255, using: &generator)
                }
            }
            if let message = try? DBusIncomingMessage(bytes) { _ = try? message.variantBoolean() }
            _ = DBusIncomingMessage.extent(of: bytes)
        }
    }

    @Test func labelsAreEscapedAsSdBusEscapesThem() {
        #expect(DBusObjectPath.encode("/p", "1") == "/p/_31")
        #expect(DBusObjectPath.encode("/p", "c2") == "/p/c2")
        #expect(DBusObjectPath.encode("/p", "") == "/p/_")
        #expect(DBusObjectPath.encode("/p", "a-b.c") == "/p/a_2db_2ec")
        #expect(DBusObjectPath.encode("/p", "é") == "/p/_c3_a9")
    }

    @Test func onlyAPlainUnixPathIsAskedOnTheWire() {
        #expect(BusAddress.socketPath("unix:path=/run/dbus/system_bus_socket") == "/run/dbus/system_bus_socket")
        #expect(BusAddress.socketPath("unix:path=/tmp/b,guid=0123") == "/tmp/b")
        #expect(BusAddress.socketPath("unix:abstract=/tmp/b") == nil)
        #expect(BusAddress.socketPath("unix:path=/tmp/%2fb") == nil)
        #expect(BusAddress.socketPath("unix:path=/" + String(repeating: "a", count: 120)) == nil)
        #expect(BusAddress.socketPath("tcp:host=localhost,port=1") == nil)
    }
}
