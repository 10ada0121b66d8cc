import Foundation
import Glibc
import Keygate
import KeygatePolicy
import KeygateProtocol
import KeygateStore
import Testing

/// Broken and hostile clients end their own connection only; everyone else keeps being served.
@Suite struct HostileClientTests {
    /// User A's item, read back through a fresh client: the daemon still serves others correctly.
    static func expectServing(_ daemon: DaemonFixture, _ context: String) throws {
        #expect(daemon.isRunning, "keygated died \(context): \(daemon.log)")
        #expect(try daemon.probe(as: DaemonFixture.userA, "get", "svc", "acc").lines == ["value-a"], "\(context)")
    }

    @Test func fuzzedFramesCloseOnlyTheirConnection() throws {
        let daemon = try DaemonFixture(config: "idle-timeout = 2\n")
        try daemon.start()
        #expect(try daemon.probe(as: DaemonFixture.userA, "add", "svc", "acc", "value-a").lines == ["ok"])
        var state: UInt64 = 0xF00D
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        for round in 0..<60 {
            let connection = try daemon.connect()
            let valid = try connection.hello(group: "g", client: "f").frame(requestID: 1).encoded()
            var bytes: [UInt8]
            switch round % 3 {
            case 0: bytes = (0..<Int(next() % 300)).map { _ in UInt8(truncatingIfNeeded: next()) }
            case 1:
                bytes = valid
                bytes[Int(next()) % bytes.count] ^= UInt8(1) << UInt8(next() % 8)
            default:
                bytes = valid + (0..<Int(next() % 40)).map { _ in UInt8(truncatingIfNeeded: next()) }
            }
            connection.send(bytes)
            // Each ends in a reply, an error frame and close, or (a half frame) the idle timeout.
            _ = connection.receive(timeout: 0.2)
        }
        try Self.expectServing(daemon, "after fuzzed frames")
    }

    @Test func anOversizedFrameGetsAnErrorFrameAndClose() throws {
        let daemon = try DaemonFixture(config: "max-frame-size = 65536\n")
        try daemon.start()
        #expect(try daemon.probe(as: DaemonFixture.userA, "add", "svc", "acc", "value-a").lines == ["ok"])
        let connection = try daemon.connect()
        try connection.greet()
        // A length field of 1 GiB: refused from the header alone.
        connection.send([0x40, 0, 0, 0, FrameLimits.version, 0x02, 0, 0, 0, 0, 0, 2])
        let reply = try #require(connection.receive())
        #expect(reply.id == 0)
        #expect(reply.message.keygateError?.status.rawValue == -50)
        #expect(connection.closedByPeer(within: 5))
        // A real frame just above the limit too.
        let big = try daemon.connect()
        try big.greet()
        let add = Message.add(
            AddRequest(service: "s", account: "a", data: SecretData(bytes: [UInt8](repeating: 7, count: 70_000))))
        try big.send(add, id: 2)
        #expect(big.receive()?.message.keygateError?.status.rawValue == -50)
        try Self.expectServing(daemon, "after oversized frames")
    }

    @Test func outOfOrderFramesGetBadRequestAndClose() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        let first = try daemon.connect()
        try first.send(.status, id: 1)  // no hello first
        #expect(first.receive()?.message.keygateError?.status.rawValue == -909)
        #expect(first.closedByPeer(within: 5))
        let second = try daemon.connect()
        try second.greet()
        try second.send(.done, id: 2)  // a daemon message from a client
        #expect(second.receive()?.message.keygateError?.status.rawValue == -909)
        #expect(second.closedByPeer(within: 5))
    }

    @Test func aHalfSentFrameIsClosedAtTheIdleTimeoutWhileOthersAreServed() throws {
        let daemon = try DaemonFixture(config: "idle-timeout = 2\n")
        try daemon.start()
        #expect(try daemon.probe(as: DaemonFixture.userA, "add", "svc", "acc", "value-a").lines == ["ok"])
        let half = try daemon.connect()
        try half.greet()
        let frame = try Message.status.frame(requestID: 2).encoded()
        half.send(Array(frame[0..<7]))
        let started = Date()
        try Self.expectServing(daemon, "while a frame is half-sent")
        #expect(Date().timeIntervalSince(started) < 2, "another client waited for the stalled one")
        let reply = try #require(half.receive(timeout: 5))
        #expect(reply.message.keygateError?.status.rawValue == -25308)
        #expect(half.closedByPeer(within: 5))
    }

    /// The idle timeout bounds a half-sent frame as a whole: one byte a second, each well inside
    /// a 2 s idle timeout, does not keep the frame open; the connection ends before the frame would.
    @Test func aFrameTrickledByteByByteIsClosedAtTheIdleTimeout() throws {
        let daemon = try DaemonFixture(config: "idle-timeout = 2\n")
        try daemon.start()
        let trickle = try daemon.connect()
        try trickle.greet()
        let add = Message.add(
            AddRequest(service: "s", account: "a", data: SecretData(bytes: [UInt8](repeating: 7, count: 200))))
        let frame = try add.frame(requestID: 2).encoded()
        var reply: (id: UInt32, message: Message)?
        for byte in frame.prefix(12) {
            _ = trickle.send([byte])
            reply = trickle.receive(timeout: 1)  // the next byte comes 1 s later, inside the idle timeout
            if reply != nil { break }
        }
        let answer = try #require(reply, "12 bytes a second apart kept a half-sent frame open")
        #expect(answer.message.keygateError?.status.rawValue == -25308)
        #expect(trickle.closedByPeer(within: 5))
        #expect(daemon.isRunning, "keygated died: \(daemon.log)")
    }

    /// Greets, adds 20 items of 40 KB and asks for them all: an 800 KB reply, which overflows the
    /// socket buffers while nobody reads it.
    static func askForALargeReply(_ connection: RawConnection) throws {
        try connection.greet()
        for index in 0..<20 {
            let value = SecretData(bytes: [UInt8](repeating: UInt8(index), count: 40_000))
            try connection.send(
                .add(AddRequest(service: "big", account: "\(index)", data: value)), id: UInt32(index + 2))
            #expect(connection.receive()?.message == .done)
        }
        try connection.send(.copyMatching(ItemQuery(service: "big", matchLimit: .all, returnData: true)), id: 100)
    }

    @Test func aClientThatStopsReadingBlocksNobody() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        #expect(try daemon.probe(as: DaemonFixture.userA, "add", "svc", "acc", "value-a").lines == ["ok"])
        let stalled = try daemon.connect()
        try Self.askForALargeReply(stalled)
        sleep(1)
        let started = Date()
        for _ in 0..<3 { try Self.expectServing(daemon, "while a client does not read") }
        #expect(Date().timeIntervalSince(started) < 5)
    }

    /// A reply has one deadline as a whole (`send-timeout`): a client that takes 8 KB every 200 ms
    /// of an 800 KB reply (a steady trickle that restarted a per-send timeout every time) is
    /// closed once the reply's time is up, long before it has read it all.
    @Test func aTricklingReaderIsClosedAtTheSendTimeout() throws {
        let daemon = try DaemonFixture(config: "send-timeout = 2\n")
        try daemon.start()
        #expect(try daemon.probe(as: DaemonFixture.userA, "add", "svc", "acc", "value-a").lines == ["ok"])
        let trickle = try daemon.connect()
        try Self.askForALargeReply(trickle)
        // 3 s of trickling (past the 2 s the reply may take), then everything that is there, at once.
        let started = Date()
        var taken = 0
        var buffer = [UInt8](repeating: 0, count: 8_192)
        while Date().timeIntervalSince(started) < 3 {
            usleep(200_000)
            let count = recv(trickle.fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 { taken += count }
        }
        var ended = false
        var drain = [UInt8](repeating: 0, count: 65_536)
        while Date().timeIntervalSince(started) < 20 {
            var poller = pollfd(fd: trickle.fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 1_000) > 0 else { continue }
            let count = recv(trickle.fd, &drain, drain.count, 0)
            if count <= 0 {
                ended = true
                break
            }
            taken += count
        }
        #expect(ended, "the trickling reader kept its connection")
        #expect(taken < 800_000, "the reader got the whole reply (\(taken) bytes) at 40 KB/s")
        #expect(daemon.log.contains("took no whole reply in 2 s"), "\(daemon.log)")
        try Self.expectServing(daemon, "after a trickling reader")
    }

    @Test func connectionLimitsRefuseTheExtraConnectionOnly() throws {
        let daemon = try DaemonFixture(config: "max-connections-per-user = 2\n")
        try daemon.start()
        #expect(try daemon.probe(as: DaemonFixture.userA, "add", "svc", "acc", "value-a").lines == ["ok"])
        let one = try daemon.connect()
        try one.greet()
        let two = try daemon.connect()
        try two.greet()
        let three = try daemon.connect()
        #expect(three.receive()?.message.keygateError?.status.rawValue == -108)
        // Another uid is not affected by root's connections; root's own still work.
        try Self.expectServing(daemon, "at root's connection limit")
        try one.send(.status, id: 2)
        guard case .statusReply(let status)? = one.receive()?.message else {
            Issue.record("no status on an admitted connection")
            return
        }
        #expect(status.uid == 0)
    }

    @Test func theGlobalLimitRefusesAnyUidBeyondIt() throws {
        let daemon = try DaemonFixture(config: "max-connections = 2\n")
        try daemon.start()
        var one: RawConnection? = try daemon.connect()
        try one?.greet()
        let two = try daemon.connect()
        try two.greet()
        let refused = try daemon.probe(as: DaemonFixture.userA, "status")
        #expect(refused.status == 1)
        #expect(refused.lines.first?.hasPrefix("error -108") == true, "\(refused.output)")
        // Once a connection ends, its place is free again.
        withExtendedLifetime(two) {}
        one = nil  // closes it
        #expect(one == nil)
        usleep(200_000)
        #expect(try daemon.probe(as: DaemonFixture.userA, "status").lines.first?.hasPrefix("mode=daemon") == true)
    }

    @Test func twoHundredConcurrentClientsAreAllServed() throws {
        let daemon = try DaemonFixture(config: "max-connections-per-user = 256\n")
        try daemon.start()
        #expect(try daemon.probe(as: DaemonFixture.userA, "add", "svc", "acc", "value-a").lines == ["ok"])
        var connections: [RawConnection] = []
        for _ in 0..<200 {
            let connection = try daemon.connect()
            try connection.send(try connection.hello(group: "g", client: "many"), id: 1)
            connections.append(connection)
        }
        // All 200 are open at once; each is greeted, then asks for its status.
        for connection in connections {
            guard case .helloReply? = connection.receive()?.message else {
                Issue.record("a client was not greeted")
                return
            }
            try connection.send(.status, id: 2)
        }
        var served = 0
        for connection in connections {
            if case .statusReply(let status)? = connection.receive()?.message, status.uid == 0 { served += 1 }
        }
        #expect(served == 200)
        try Self.expectServing(daemon, "with 200 clients connected")
    }
}
