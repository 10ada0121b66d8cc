import Keygate
import KeygatePolicy
import KeygateProtocol
import KeygateStore
import Testing

/// The incremental decoder's typed rejections.
@Suite struct FrameDecoderTests {
    static func header(
        length: UInt32, version: UInt8 = FrameLimits.version, type: UInt8 = 0x02, reserved: UInt8 = 0, id: UInt32 = 1
    )
        -> [UInt8]
    {
        [
            UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF),
            version, type, reserved, 0, UInt8(id >> 24), UInt8(id >> 16 & 0xFF), UInt8(id >> 8 & 0xFF),
            UInt8(id & 0xFF),
        ]
    }

    @Test func anOversizedLengthIsRefusedFromTheLengthFieldAlone() {
        var decoder = FrameDecoder(maximumLength: 4096)
        // Only the 4 length bytes arrive: refused before any payload is buffered.
        #expect(throws: ProtocolError.oversized(length: 4097, limit: 4096)) {
            _ = try decoder.append([0, 0, 0x10, 0x01])
        }
        #expect(decoder.bufferedCount == 0)
        // After an error, everything is refused.
        #expect(throws: ProtocolError.oversized(length: 4097, limit: 4096)) {
            _ = try decoder.append(Self.header(length: 8))
        }
    }

    @Test func theLimitIsClampedToTheHardMaximum() {
        let decoder = FrameDecoder(maximumLength: Int.max)
        #expect(decoder.maximumLength == FrameLimits.hardMaximumLength)
        var huge = FrameDecoder(maximumLength: Int.max)
        #expect(throws: ProtocolError.oversized(length: 0xFFFF_FFFF, limit: FrameLimits.hardMaximumLength)) {
            _ = try huge.append([0xFF, 0xFF, 0xFF, 0xFF])
        }
    }

    @Test func aLengthBelowTheHeaderIsRefused() {
        var decoder = FrameDecoder()
        #expect(throws: ProtocolError.undersized(length: 7)) { _ = try decoder.append([0, 0, 0, 7]) }
    }

    @Test func unknownVersionTypeAndReservedBitsAreRefused() {
        var a = FrameDecoder()
        // Version 1 (before the challenge) is refused like any other this build does not speak.
        #expect(throws: ProtocolError.unsupportedVersion(1)) { _ = try a.append(Self.header(length: 8, version: 1)) }
        var old = FrameDecoder()
        // Version 2 (before hello said whether the client answers prompts) too.
        #expect(throws: ProtocolError.unsupportedVersion(2)) { _ = try old.append(Self.header(length: 8, version: 2)) }
        var three = FrameDecoder()
        // Version 3 (before key items) too.
        #expect(throws: ProtocolError.unsupportedVersion(3)) {
            _ = try three.append(Self.header(length: 8, version: 3))
        }
        var next = FrameDecoder()
        #expect(throws: ProtocolError.unsupportedVersion(5)) { _ = try next.append(Self.header(length: 8, version: 5)) }
        var b = FrameDecoder()
        #expect(throws: ProtocolError.unknownMessageType(0x40)) { _ = try b.append(Self.header(length: 8, type: 0x40)) }
        var c = FrameDecoder()
        #expect(throws: ProtocolError.reservedBitsSet) { _ = try c.append(Self.header(length: 8, reserved: 1)) }
    }

    @Test func aStreamEndingInsideAFrameIsTruncated() throws {
        var decoder = FrameDecoder()
        let bytes = try Message.status.frame(requestID: 1).encoded() + Self.header(length: 20)
        let frames = try decoder.append(bytes)
        #expect(frames.count == 1)
        #expect(throws: ProtocolError.truncated(buffered: 12)) { try decoder.finish() }
        var empty = FrameDecoder()
        try empty.finish()
    }

    @Test func bytesAfterTheLastFieldAreMalformed() throws {
        var frame = Message.status.frame(requestID: 1)
        frame.payload = [0]
        #expect(throws: ProtocolError.malformed("1 bytes after the last field")) { _ = try Message(frame) }
    }

    @Test func aCountLargerThanThePayloadIsRefusedBeforeAllocating() {
        // auditRecords with a count of 2^32-1 strings and no bytes behind it.
        let frame = Frame(type: .auditRecords, requestID: 1, payload: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: ProtocolError.self) { _ = try Message(frame) }
        let items = Frame(type: .items, requestID: 1, payload: [0x7F, 0xFF, 0xFF, 0xFF, 0, 0])
        #expect(throws: ProtocolError.self) { _ = try Message(items) }
    }

    @Test func invalidFieldValuesAreMalformed() throws {
        // A boolean that is 2, an optional tag of 3, invalid UTF-8, an unknown protection class,
        // an access control that does not parse.
        var query = Message.delete(ItemQuery()).frame(requestID: 1)
        query.payload[5] = 3  // synchronizable
        #expect(throws: ProtocolError.malformed("synchronizable: must be 0, 1 or 2")) { _ = try Message(query) }
        var optional = Message.delete(ItemQuery()).frame(requestID: 1)
        optional.payload[0] = 3
        #expect(throws: ProtocolError.malformed("service: an optional's tag must be 0 or 1")) {
            _ = try Message(optional)
        }
        let badUTF8 = Frame(type: .error, requestID: 1, payload: [0, 0, 0, 0, 0, 0, 0, 1, 0xC3])
        #expect(throws: ProtocolError.malformed("message: not UTF-8")) { _ = try Message(badUTF8) }
        let withNUL = Frame(type: .error, requestID: 1, payload: [0, 0, 0, 0, 0, 0, 0, 1, 0])
        #expect(throws: ProtocolError.malformed("message: contains NUL")) { _ = try Message(withNUL) }
        var add = Message.add(AddRequest(service: "s", account: "a", data: SecretData(bytes: [])))
            .frame(requestID: 1)
        // service(4+1) account(4+1) group tag, label tag, generic tag, sync (13) → protection tag at 14.
        add.payload[14] = 2
        #expect(throws: ProtocolError.malformed("protection: tag must be 0 or 1")) { _ = try Message(add) }
        let presence = MessageRoundTripTests.presence
        var control = Message.add(
            AddRequest(service: "s", account: "a", accessControl: presence, data: SecretData(bytes: []))
        ).frame(requestID: 1)
        // Corrupt the first byte of the access control's text form.
        let text = Array(presence.textForm.utf8)
        let start = try #require(
            (0...(control.payload.count - text.count)).first { Array(control.payload[$0..<($0 + text.count)]) == text })
        control.payload[start] = UInt8(ascii: "!")
        #expect(throws: ProtocolError.self) { _ = try Message(control) }
    }
}
