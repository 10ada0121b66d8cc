import Foundation
import KeygateLinux
import Testing

/// The lock-state question on the wire (KeygateLinux's LogindWireQuestion) against a scripted bus: the
/// EXTERNAL handshake, BEGIN, Hello and the Get go out in one write; the answer is read whether
/// it follows the AUTH line in the same chunk or the line comes in pieces; a refused handshake or
/// a line that never ends fails closed.
@Suite(.serialized) struct LogindHandshakeTests {
    static let okLine = Array("OK 0123456789abcdef0123456789abcdef\r\n".utf8)

    static func bus(replies: [[UInt8]]) throws -> ScriptedBus {
        try ScriptedBus(until: "LockedHint", replies: replies)
    }

    @Test func theHandshakeAndTheQuestionGoOutInOneWrite() throws {
        // The line and the answer in one chunk, as a bus that read everything at once sends them.
        let bus = try Self.bus(replies: [Self.okLine + ScriptedBus.lockedHintReply(serial: 2, value: false)])
        let warnings = LogindLockStateTests.Warnings()
        #expect(
            LogindLockStateTests.isLocked(session: "1", address: "unix:path=\(bus.path)", warnings: warnings) == false)
        bus.waitUntilDone()
        // Everything had arrived before the bus said a word: one round trip, not two.
        let sent = String(decoding: bus.receivedBeforeReplying, as: UTF8.self)
        #expect(sent.hasPrefix("\0AUTH EXTERNAL "))
        #expect(sent.contains("\r\nBEGIN\r\n"))
        #expect(sent.contains("Hello"))
        #expect(sent.contains("/org/freedesktop/login1/session/_31"))
        #expect(warnings.all.isEmpty)
    }

    @Test func aLockedAnswerRightAfterTheLineIsLocked() throws {
        let bus = try Self.bus(replies: [Self.okLine + ScriptedBus.lockedHintReply(serial: 2, value: true)])
        let warnings = LogindLockStateTests.Warnings()
        #expect(
            LogindLockStateTests.isLocked(session: "1", address: "unix:path=\(bus.path)", warnings: warnings) == true)
        #expect(warnings.all.isEmpty)
    }

    @Test func aLineInPiecesIsReadWhole() throws {
        let bus = try Self.bus(
            replies: [
                Array(Self.okLine[0..<10]),
                Array(Self.okLine[10...]) + ScriptedBus.lockedHintReply(serial: 2, value: false),
            ])
        let warnings = LogindLockStateTests.Warnings()
        #expect(
            LogindLockStateTests.isLocked(session: "1", address: "unix:path=\(bus.path)", warnings: warnings) == false)
        #expect(warnings.all.isEmpty)
    }

    @Test func aRefusedHandshakeFailsClosed() throws {
        let bus = try Self.bus(replies: [Array("REJECTED EXTERNAL\r\n".utf8)])
        let warnings = LogindLockStateTests.Warnings()
        #expect(
            LogindLockStateTests.isLocked(session: "1", address: "unix:path=\(bus.path)", warnings: warnings) == true)
        #expect(warnings.all.count == 1)
        // Refused, not timed out.
        #expect(warnings.all.first?.contains("(Permission denied)") == true)
        #expect(warnings.all.first?.hasSuffix("the device counts as locked") == true)
    }

    @Test func aLineThatNeverEndsFailsClosed() throws {
        let bus = try Self.bus(replies: [[UInt8](repeating: UInt8(ascii: "x"), count: 300)])
        let warnings = LogindLockStateTests.Warnings()
        #expect(
            LogindLockStateTests.isLocked(session: "1", address: "unix:path=\(bus.path)", warnings: warnings) == true)
        #expect(warnings.all.count == 1)
        // A bad message, not a time-out.
        #expect(warnings.all.first?.contains("(Bad message)") == true)
    }
}
