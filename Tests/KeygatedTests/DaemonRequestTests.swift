import KeygateItems
import KeygatePolicy
import KeygateProtocol
import Testing

@testable import KeygateServing
@testable import keygated

/// A daemon request is made once from what a frontend received, and its options are checked
/// there: nothing past ``DaemonRequest`` bounds the reuse window again.
@Suite struct DaemonRequestTests {
    static func caller() -> DaemonCaller {
        DaemonCaller(
            identity: PeerIdentity(
                uid: 1000, gid: 1000, pid: 1, executable: "/usr/bin/true", program: "/usr/bin/true",
                pidfdSource: "SO_PEERPIDFD", session: nil),
            pidfd: -1)
    }

    @Test func theReuseWindowIsCheckedWhenTheRequestIsMade() throws {
        let query = ItemQuery(service: "s")
        for message in [
            Message.copyMatching(query, reuseSeconds: 301), .update(query, ItemChanges(), reuseSeconds: 1000),
            .delete(query, reuseSeconds: .max),
        ] {
            #expect(throws: KeygateError.self) {
                _ = try DaemonRequest(message, caller: Self.caller(), frontend: .keygateSocket)
            }
        }
        let made = try #require(
            try DaemonRequest(.copyMatching(query, reuseSeconds: 300), caller: Self.caller(), frontend: .keygateSocket))
        #expect(made.reuse.seconds == 300)
        guard case .copyMatching(let carried) = made.operation else {
            Issue.record("expected a copyMatching, got \(made.operation)")
            return
        }
        #expect(carried == query)
        let plain = try #require(try DaemonRequest(.status, caller: Self.caller(), frontend: .keygateSocket))
        #expect(plain.reuse == .none)
    }

    @Test func whatIsNoRequestMakesNone() throws {
        for message in [Message.cancel, .promptAnswer(nil), .done, .challenge(nonce: [])] {
            #expect(try DaemonRequest(message, caller: Self.caller(), frontend: .keygateSocket) == nil)
        }
    }

    @Test func theKeygateSocketCarriesItsOwnPrompts() {
        #expect(DaemonRequest.Frontend.keygateSocket.hasPromptChannel)
    }
}
