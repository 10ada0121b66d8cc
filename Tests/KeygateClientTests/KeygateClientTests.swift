import Foundation
import Keygate
import KeygateClient
import KeygatePAM
import KeygatePolicy
import KeygateProtocol
import KeygateStore
import KeygateTesting
import Testing

/// KeygateClient against a scripted daemon: relayed prompts, cancels, errors that keep their
/// status, a daemon that goes away, one request in flight.
@Suite struct KeygateClientTests {
    static let read = ItemQuery(service: "s", account: "a", returnData: true, operationPrompt: "Read the token")

    @Test func noDaemonIsNotAvailableNamingTheSocket() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/absent.sock"
        let error = #expect(throws: KeygateError.self) { _ = try KeygateClient(socketPath: path, accessGroups: ["g"]) }
        #expect(error?.status == .notAvailable)
        #expect(error?.message.contains(path) == true)
        let long = #expect(throws: KeygateError.self) {
            _ = try KeygateClient(socketPath: "/" + String(repeating: "x", count: 200), accessGroups: ["g"])
        }
        #expect(long?.status == .param)
    }

    @Test func helloCarriesTheGroupsAndNameAndARefusalKeepsItsStatus() throws {
        let daemon = try ScriptedDaemon { peer in
            let hello = try peer.receive()
            #expect(
                hello.message
                    == .hello(
                        minimumVersion: FrameLimits.version, maximumVersion: FrameLimits.version,
                        accessGroups: ["g", "h"], client: "t", challenge: peer.nonce, answersPrompts: false),
                "a client with no passphrase source answers no prompt: its proofs go to its session's agent")
            try peer.send(
                .error(status: KeygateStatus.unimplemented.rawValue, message: "protocol 9 only"), id: hello.id)
        }
        let error = #expect(throws: KeygateError.self) {
            _ = try KeygateClient(socketPath: daemon.path, accessGroups: ["g", "h"], clientName: "t")
        }
        #expect(error == KeygateError(.unimplemented, "protocol 9 only"))
        daemon.finish()
    }

    /// A daemon of protocol 1 waits for hello and sends no challenge: the client says so within
    /// a few seconds (not after its two-minute reply timeout) and names the likely fix.
    @Test func aDaemonThatSendsNoChallengeIsReportedAsAnOldProtocol() throws {
        let daemon = try ScriptedDaemon(challenges: false) { peer in
            #expect(throws: (any Error).self) { _ = try peer.receive(timeout: 8) }
        }
        let started = ContinuousClock.now
        let error = #expect(throws: KeygateError.self) {
            _ = try KeygateClient(socketPath: daemon.path, accessGroups: ["g"], clientName: "t")
        }
        #expect(error?.status == .notAvailable)
        #expect(
            error?.message.contains("sent no challenge in 5 s: it may speak protocol 1") == true,
            "\(String(describing: error))")
        #expect(ContinuousClock.now - started < .seconds(7))
        daemon.finish()
    }

    @Test func relayedPromptsAreAnsweredByThePassphraseSource() async throws {
        let daemon = try ScriptedDaemon { peer in
            try peer.greet()
            let request = try peer.receive()
            #expect(request.message == .copyMatching(Self.read, reuseSeconds: 0))
            try peer.send(.prompt(style: .textInfo, text: "Touch the key"), id: request.id)
            try peer.send(.prompt(style: .errorMessage, text: "Try again"), id: request.id)
            // Messages are shown and never answered: the next frame is the password prompt's answer.
            try peer.send(.prompt(style: .echoOff, text: "Password: "), id: request.id)
            #expect(try peer.receive() == (request.id, .promptAnswer(SecretData("right"))))
            try peer.send(.items([MatchedItem(attributes: nil, data: SecretData("value"))]), id: request.id)
        }
        let source = ProgrammaticPassphraseSource(passphrase: "right")
        let client = try KeygateClient(socketPath: daemon.path, accessGroups: ["g"], passphraseSource: source)
        #expect(client.daemonVersion == "scripted")
        let items = try await client.copyMatching(Self.read)
        #expect(items.first?.data == SecretData("value"))
        #expect(source.prompts.map(\.text) == ["Password: "])
        #expect(source.prompts.first?.echo == false)
        #expect(source.prompts.first?.reason == "Read the token")
        #expect(source.messages.map(\.text) == ["Touch the key", "Try again"])
        daemon.finish()
    }

    @Test func aPromptWithoutAnAnswerSendsCancel() async throws {
        let daemon = try ScriptedDaemon { peer in
            try peer.greet()
            let request = try peer.receive()
            try peer.send(.prompt(style: .echoOff, text: "Password: "), id: request.id)
            #expect(try peer.receive() == (request.id, .cancel))
            try peer.send(Message(KeygateError(.userCanceled, "cancelled")), id: request.id)
        }
        // No answer from the source, then no source at all: both cancel.
        let client = try KeygateClient(
            socketPath: daemon.path, accessGroups: ["g"],
            passphraseSource: ProgrammaticPassphraseSource(passphrase: nil))
        let error = await #expect(throws: KeygateError.self) { _ = try await client.copyMatching(Self.read) }
        #expect(error?.status == .userCanceled)
        daemon.finish()
    }

    @Test func cancelEndsTheRequestInFlight() async throws {
        let daemon = try ScriptedDaemon { peer in
            try peer.greet()
            for _ in 0..<2 {
                let request = try peer.receive()
                try peer.send(.prompt(style: .textInfo, text: "waiting"), id: request.id)
                #expect(try peer.receive() == (request.id, .cancel))
                try peer.send(Message(KeygateError(.userCanceled, "cancelled")), id: request.id)
            }
        }
        let source = ProgrammaticPassphraseSource(passphrase: nil)
        let client = try KeygateClient(socketPath: daemon.path, accessGroups: ["g"], passphraseSource: source)
        // cancel() from outside the call.
        let first = Task { try await client.delete(ItemQuery(service: "s")) }
        try await Self.waitFor { source.messages.count == 1 }
        client.cancel()
        let error = await #expect(throws: KeygateError.self) { try await first.value }
        #expect(error?.status == .userCanceled)
        // Cancelling the calling task.
        let second = Task { try await client.delete(ItemQuery(service: "t")) }
        try await Self.waitFor { source.messages.count == 2 }
        second.cancel()
        let again = await #expect(throws: KeygateError.self) { try await second.value }
        #expect(again?.status == .userCanceled)
        daemon.finish()
    }

    @Test func errorsKeepTheFacadeStatusAndMessage() async throws {
        let daemon = try ScriptedDaemon { peer in
            try peer.greet()
            let request = try peer.receive()
            try peer.send(Message(KeygateError(.duplicateItem, "the item already exists")), id: request.id)
        }
        let client = try KeygateClient(socketPath: daemon.path, accessGroups: ["g"])
        let error = await #expect(throws: KeygateError.self) {
            try await client.add(AddRequest(service: "s", account: "a", data: SecretData("v")))
        }
        #expect(error == KeygateError(.duplicateItem, "the item already exists"))
        daemon.finish()
    }

    @Test func aReuseWindowAbove300IsRefusedBeforeSending() async throws {
        let daemon = try ScriptedDaemon { peer in
            try peer.greet()
            // The first thing after hello is the status request: nothing was sent for the refusals.
            let next = try peer.receive()
            #expect(next.message == .status)
            try peer.send(.done, id: next.id)
        }
        let client = try KeygateClient(socketPath: daemon.path, accessGroups: ["g"])
        let read = await #expect(throws: KeygateError.self) {
            _ = try await client.copyMatching(Self.read, reuseSeconds: 301)
        }
        let delete = await #expect(throws: KeygateError.self) { try await client.delete(Self.read, reuseSeconds: 1000) }
        let update = await #expect(throws: KeygateError.self) {
            try await client.update(ItemQuery(), changes: ItemChanges(label: "x"), reuseSeconds: .max)
        }
        #expect([read?.status, delete?.status, update?.status] == [.param, .param, .param])
        // A daemon answering status with `done` broke the protocol: not available, naming it.
        let odd = await #expect(throws: KeygateError.self) { _ = try await client.status() }
        #expect(odd?.status == .notAvailable)
        #expect(odd?.message.contains(daemon.path) == true)
        daemon.finish()
    }

    @Test func aDaemonThatGoesAwayIsNotAvailableAndTheNextCallConnectsAgain() async throws {
        let daemon = try ScriptedDaemon(connections: 2) { peer in
            // Each connection starts its own sequence of ids: hello 1, then 2.
            let hello = try peer.receive()
            #expect(hello.id == 1)
            try peer.send(.helloReply(version: 1, daemonVersion: "scripted"), id: hello.id)
            let request = try peer.receive()
            #expect(request.id == 2)
            if request.message == .lock {
                try peer.send(.done, id: request.id)
            }
            // Anything else: the connection closes without a reply (a daemon killed mid-request).
        }
        let client = try KeygateClient(socketPath: daemon.path, accessGroups: ["g"])
        let error = await #expect(throws: KeygateError.self) { try await client.delete(ItemQuery(service: "s")) }
        #expect(error?.status == .notAvailable)
        #expect(error?.message.contains(daemon.path) == true)
        try await client.lock()
        daemon.finish()
    }

    @Test func aReplyUnderAnotherIdIsNotAvailable() async throws {
        let daemon = try ScriptedDaemon { peer in
            try peer.greet()
            let request = try peer.receive()
            try peer.send(.done, id: request.id + 7)
        }
        let client = try KeygateClient(socketPath: daemon.path, accessGroups: ["g"])
        let error = await #expect(throws: KeygateError.self) { try await client.lock() }
        #expect(error?.status == .notAvailable)
        daemon.finish()
    }

    /// One request in flight, answered in order, whatever path each call takes: calls that find
    /// the connection idle write and wait on their own thread, and hand over to the queue when
    /// the reply is late (some replies here come after the caller's wait) or a prompt comes
    /// (some requests prompt); calls made meanwhile wait for the line. A second request written
    /// before a reply, or a reply given to the wrong call, fails here.
    @Test func callsFromManyTasksGoOneAtATime() async throws {
        let count = 60
        let daemon = try ScriptedDaemon { peer in
            try peer.greet()
            var last: UInt32 = 0
            for index in 0..<count {
                let request = try peer.receive()
                #expect(request.id > last)
                last = request.id
                // One request in flight: nothing more comes before this one is answered.
                #expect(!peer.more(within: index % 4 == 0 ? 5 : 1))
                guard case .delete(let query, _) = request.message else {
                    Issue.record("expected delete, got \(request.message)")
                    return
                }
                if index % 5 == 2 {
                    try peer.send(.prompt(style: .echoOff, text: "Password: "), id: request.id)
                    #expect(try peer.receive() == (request.id, .promptAnswer(SecretData("pw"))))
                    #expect(!peer.more(within: 1))
                }
                if index % 3 == 1 {
                    // Later than the caller's own wait (2 ms): the rest of the exchange is the queue's.
                    usleep(10_000)
                }
                try peer.send(Message(KeygateError(.itemNotFound, query.account ?? "")), id: request.id)
            }
        }
        let client = try KeygateClient(
            socketPath: daemon.path, accessGroups: ["g"],
            passphraseSource: ProgrammaticPassphraseSource(passphrase: "pw"))
        let answers = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<count {
                group.addTask {
                    // Some calls start at once, some while others wait, some when all is idle.
                    if index % 7 == 3 { try? await Task.sleep(nanoseconds: UInt64(index) * 300_000) }
                    do throws(KeygateError) {
                        try await client.delete(ItemQuery(account: "\(index)"))
                        return false
                    } catch {
                        // Each call gets its own reply.
                        return error.status == .itemNotFound && error.message == "\(index)"
                    }
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(answers == count)
        daemon.finish()
    }

    /// Calls one after another from one task: each finds the connection idle; a reply within
    /// the caller's wait, a late one and a prompted one all reach the right call.
    @Test func sequentialCallsOnAnIdleConnectionGetTheirOwnReplies() async throws {
        let daemon = try ScriptedDaemon { peer in
            try peer.greet()
            for index in 0..<9 {
                let request = try peer.receive()
                if index % 3 == 1 { usleep(20_000) }
                if index % 3 == 2 {
                    try peer.send(.prompt(style: .echoOff, text: "Password: "), id: request.id)
                    #expect(try peer.receive() == (request.id, .promptAnswer(SecretData("pw"))))
                }
                try peer.send(Message(KeygateError(.itemNotFound, "\(index)")), id: request.id)
            }
        }
        let client = try KeygateClient(
            socketPath: daemon.path, accessGroups: ["g"],
            passphraseSource: ProgrammaticPassphraseSource(passphrase: "pw"))
        for index in 0..<9 {
            let error = await #expect(throws: KeygateError.self) { try await client.delete(ItemQuery(account: "x")) }
            #expect(error?.message == "\(index)")
        }
        daemon.finish()
    }

    /// A call waiting for the line behind one in flight, whose task is cancelled before its
    /// turn, is never written: the daemon's next request is the call made after it.
    @Test func aQueuedCallCancelledBeforeItsTurnIsNeverSent() async throws {
        let daemon = try ScriptedDaemon { peer in
            try peer.greet()
            let first = try peer.receive()
            #expect(first.message == .delete(ItemQuery(account: "a"), reuseSeconds: 0))
            usleep(300_000)
            try peer.send(Message(KeygateError(.itemNotFound, "a")), id: first.id)
            let next = try peer.receive()
            #expect(next.message == .delete(ItemQuery(account: "c"), reuseSeconds: 0))
            try peer.send(Message(KeygateError(.itemNotFound, "c")), id: next.id)
        }
        let client = try KeygateClient(socketPath: daemon.path, accessGroups: ["g"])
        let first = Task { try await client.delete(ItemQuery(account: "a")) }
        try await Task.sleep(nanoseconds: 50_000_000)
        let queued = Task { try await client.delete(ItemQuery(account: "b")) }
        try await Task.sleep(nanoseconds: 20_000_000)
        queued.cancel()
        let answered = await #expect(throws: KeygateError.self) { try await first.value }
        #expect(answered?.message == "a")
        let cancelled = await #expect(throws: KeygateError.self) { try await queued.value }
        #expect(cancelled?.status == .userCanceled)
        let next = await #expect(throws: KeygateError.self) { try await client.delete(ItemQuery(account: "c")) }
        #expect(next?.message == "c")
        daemon.finish()
    }

    /// Waits up to 10 s for `condition`.
    static func waitFor(_ condition: () -> Bool) async throws {
        let deadline = Date().addingTimeInterval(10)
        while !condition() {
            try #require(Date() < deadline, "timed out")
            try await Task.sleep(nanoseconds: 5_000_000)
        }
    }
}

/// The client's daemon-only calls, and cancels that never reach the wire.
@Suite struct KeygateClientDaemonCallTests {
    @Test func statusAuditAndLockReturnWhatTheDaemonSent() async throws {
        let status = StatusPayload(
            mode: "daemon", uid: 1000, gid: 100, pid: 42, executable: "/usr/bin/app", daemonVersion: "v",
            pidfdSource: "SO_PEERPIDFD")
        let daemon = try ScriptedDaemon { peer in
            try peer.greet()
            let first = try peer.receive()
            #expect(first.message == .status)
            try peer.send(.statusReply(status), id: first.id)
            let show = try peer.receive()
            #expect(show.message == .auditShow(limit: 5))
            try peer.send(.auditRecords(["{\"a\":1}", "{\"b\":2}"]), id: show.id)
            let verify = try peer.receive()
            #expect(verify.message == .auditVerify)
            try peer.send(.auditVerified(records: 9, problem: "line 3: chain broken"), id: verify.id)
            let lock = try peer.receive()
            #expect(lock.message == .lock)
            try peer.send(.done, id: lock.id)
        }
        let client = try KeygateClient(socketPath: daemon.path, accessGroups: ["g"])
        #expect(try await client.status() == status)
        #expect(try await client.auditShow(limit: 5) == ["{\"a\":1}", "{\"b\":2}"])
        let verified = try await client.auditVerify()
        #expect(verified.records == 9)
        #expect(verified.problem == "line 3: chain broken")
        try await client.lock()
        daemon.finish()
    }

    @Test func aTaskCancelledBeforeItsCallSendsNothing() async throws {
        let daemon = try ScriptedDaemon { peer in
            try peer.greet()
            // The first request after hello is the one made after the cancelled call.
            let next = try peer.receive()
            #expect(next.message == .lock)
            try peer.send(.done, id: next.id)
        }
        let client = try KeygateClient(socketPath: daemon.path, accessGroups: ["g"])
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await client.delete(ItemQuery(service: "s"))
        }
        let error = await #expect(throws: KeygateError.self) { try await task.value }
        #expect(error?.status == .userCanceled)
        try await client.lock()
        daemon.finish()
    }
}
