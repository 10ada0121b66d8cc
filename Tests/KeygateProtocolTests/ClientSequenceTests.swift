import Keygate
import KeygateProtocol
import Testing

/// Out-of-order frames are refused before anything acts on them.
@Suite struct ClientSequenceTests {
    static func frame(_ message: Message, _ id: UInt32) -> Frame { message.frame(requestID: id) }
    static let hello = Message.hello(
        minimumVersion: 2, maximumVersion: 2, accessGroups: ["g"], client: "t",
        challenge: [UInt8](repeating: 1, count: 16))

    @Test func helloMustComeFirstAndOnce() throws {
        var sequence = ClientSequence()
        #expect(throws: ProtocolError.outOfOrder("the first frame must be hello")) {
            try sequence.accept(Self.frame(.status, 1))
        }
        var zero = ClientSequence()
        #expect(throws: ProtocolError.outOfOrder("request id must be above 0")) {
            try zero.accept(Self.frame(Self.hello, 0))
        }
        var twice = ClientSequence()
        try twice.accept(Self.frame(Self.hello, 1))
        #expect(throws: ProtocolError.outOfOrder("hello was already sent")) {
            try twice.accept(Self.frame(Self.hello, 2))
        }
    }

    @Test func requestIDsMustIncreaseAndOneRequestIsInFlight() throws {
        var sequence = ClientSequence()
        try sequence.accept(Self.frame(Self.hello, 1))
        sequence.finished()
        try sequence.accept(Self.frame(.status, 5))
        #expect(sequence.inFlight == 5)
        #expect(throws: ProtocolError.outOfOrder("request 5 is still in flight")) {
            try sequence.accept(Self.frame(.status, 6))
        }
        sequence.finished()
        #expect(throws: ProtocolError.outOfOrder("request id 5 does not follow 5")) {
            try sequence.accept(Self.frame(.status, 5))
        }
        #expect(throws: ProtocolError.outOfOrder("request id 4 does not follow 5")) {
            try sequence.accept(Self.frame(.status, 4))
        }
    }

    @Test func daemonMessagesFromAClientAreRefused() throws {
        var sequence = ClientSequence()
        try sequence.accept(Self.frame(Self.hello, 1))
        #expect(throws: ProtocolError.self) { try sequence.accept(Self.frame(.done, 2)) }
        #expect(throws: ProtocolError.self) { try sequence.accept(Self.frame(.error(status: 0, message: ""), 2)) }
    }

    @Test func answersAndCancelsNeedTheirRequest() throws {
        var sequence = ClientSequence()
        try sequence.accept(Self.frame(Self.hello, 1))
        sequence.finished()
        #expect(throws: ProtocolError.outOfOrder("no prompt is waiting for request 2")) {
            try sequence.accept(Self.frame(.promptAnswer(nil), 2))
        }
        #expect(throws: ProtocolError.outOfOrder("request 2 is not in flight")) {
            try sequence.accept(Self.frame(.cancel, 2))
        }
        try sequence.accept(Self.frame(.copyMatching(ItemQuery()), 2))
        #expect(throws: ProtocolError.self) { try sequence.accept(Self.frame(.promptAnswer(nil), 2)) }
        sequence.prompted()
        try sequence.accept(Self.frame(.promptAnswer(nil), 2))
        #expect(!sequence.promptOutstanding)
        try sequence.accept(Self.frame(.cancel, 2))
        #expect(throws: ProtocolError.self) { try sequence.accept(Self.frame(.cancel, 3)) }
    }

    @Test func aCancelThatCrossedTheReplyIsAcceptedAsLate() throws {
        var sequence = ClientSequence()
        try sequence.accept(Self.frame(Self.hello, 1))
        sequence.finished()
        // The hello is not a request a client can cancel.
        #expect(throws: ProtocolError.self) { try sequence.accept(Self.frame(.cancel, 1)) }
        let request = Self.frame(.delete(ItemQuery()), 2)
        try sequence.accept(request)
        let early = Self.frame(.cancel, 2)
        try sequence.accept(early)
        #expect(!sequence.isLate(cancel: early))
        sequence.finished()
        let late = Self.frame(.cancel, 2)
        try sequence.accept(late)
        #expect(sequence.isLate(cancel: late))
        #expect(throws: ProtocolError.self) { try sequence.accept(Self.frame(.cancel, 1)) }
        // The next request still needs a higher id.
        #expect(throws: ProtocolError.self) { try sequence.accept(Self.frame(.status, 2)) }
        try sequence.accept(Self.frame(.status, 3))
    }
}
