import Foundation
import Keygate
import KeygatePolicy
import KeygateProtocol
import KeygateStore
import Testing

/// The request fields the daemon checks itself before the facade: the reuse window and `lock`.
@Suite struct RequestFieldTests {
    @Test func aReuseWindowAbove300IsRefusedAsParamAndTheConnectionGoesOn() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        let client = try daemon.connect()
        try client.greet()
        try client.send(.add(AddRequest(service: "s", account: "a", data: SecretData("v"))), id: 2)
        #expect(client.receive()?.message == .done)
        let query = ItemQuery(service: "s", account: "a")
        var read = query
        read.returnData = true
        for (id, request) in [
            (3, Message.copyMatching(read, reuseSeconds: 301)),
            (4, .update(query, ItemChanges(data: SecretData("w")), reuseSeconds: 1000)),
            (5, .delete(query, reuseSeconds: UInt32.max)),
        ] {
            try client.send(request, id: UInt32(id))
            let reply = try #require(client.receive())
            #expect(reply.id == UInt32(id))
            #expect(reply.message.keygateError?.status == .param)
            #expect(reply.message.keygateError?.message.contains("reuseSeconds") == true)
        }
        // Nothing changed, and 300 itself is accepted.
        try client.send(.copyMatching(read, reuseSeconds: 300), id: 6)
        let items = try #require(client.receive())
        guard case .items(let found) = items.message else {
            Issue.record("expected items, got \(items.message)")
            return
        }
        #expect(found.first?.data == SecretData("v"))
        try client.send(.delete(query, reuseSeconds: 300), id: 7)
        #expect(client.receive()?.message == .done)
    }

    @Test func lockIsAnsweredDoneAndKeepsTheConnection() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        let client = try daemon.connect()
        try client.greet()
        try client.send(.lock, id: 2)
        let reply = try #require(client.receive())
        #expect(reply.id == 2)
        #expect(reply.message == .done)
        try client.send(.status, id: 3)
        guard case .statusReply = try #require(client.receive()).message else {
            Issue.record("the connection did not go on after lock")
            return
        }
    }

    @Test func aCancelThatCrossesItsReplyIsIgnoredAndTheConnectionGoesOn() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        let client = try daemon.connect()
        try client.greet()
        try client.send(.lock, id: 2)
        #expect(client.receive()?.message == .done)
        // Before: "request 2 is not in flight", and the connection was closed.
        try client.send(.cancel, id: 2)
        try client.send(.status, id: 3)
        let reply = try #require(client.receive())
        #expect(reply.id == 3)
        guard case .statusReply = reply.message else {
            Issue.record("a late cancel ended the connection: \(reply.message)")
            return
        }
        // A cancel of a request never sent is still out of order.
        try client.send(.cancel, id: 9)
        #expect(client.receive()?.message.keygateError?.status == .badReq)
        #expect(client.closedByPeer(within: 5))
    }
}
