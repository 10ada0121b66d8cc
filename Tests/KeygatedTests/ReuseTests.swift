import Foundation
import Glibc
import Testing

/// Proof reuse in the daemon (issue 15 point 3): a proof is remembered in the daemon's memory
/// under (uid, logind session, controlling terminal as the kernel reports it) and reused only
/// by a request with the same key, within the window that request asks for; `lock` clears
/// the caller's session. The second read of each scenario cancels any prompt, so a reuse shows
/// as the value with no prompt, and a refused reuse as a prompt then errSecUserCanceled.
@Suite struct ReuseTests {
    let a = DaemonFixture.userA
    static let sessionCounter = Counter()

    final class Counter: @unchecked Sendable {
        private var value = 0
        private let lock = NSLock()
        func next() -> String {
            lock.lock()
            defer { lock.unlock() }
            value += 1
            return "kgr\(getpid())x\(value)"
        }
    }

    let prove = ["relay", "answer", "gated", "me", "pass-a", "60"]
    func reread(window: Int = 60) -> [String] { ["relay", "cancel", "gated", "me", "-", "\(window)"] }

    func world() throws -> RelayFixture {
        let world = try RelayFixture()
        try world.daemon.start()
        try world.addGated(as: a, "gated", "me", "a-value")
        return world
    }

    func expectReused(_ result: DaemonFixture.Result, _ comment: Comment? = nil) {
        #expect(result.lines == ["a-value"], "\(result.output)")
    }

    func expectAskedAgain(_ result: DaemonFixture.Result) {
        #expect(result.lines.first?.hasPrefix("prompt 1 ") == true, "\(result.output)")
        #expect(result.lines.last?.hasPrefix("error -128") == true, "\(result.output)")
    }

    @Test func theSameSessionAndTerminalReuseAProofWithinTheWindow() throws {
        let world = try world()
        let terminal = try ReuseTerminal(uid: a, session: Self.sessionCounter.next(), directory: world.daemon.directory)
        let results = try terminal.run(
            as: a, socket: world.daemon.socket, [prove, reread(), reread(window: 0)])
        #expect(results[0].lines.last == "a-value", "\(results[0].output)")
        expectReused(results[1])
        // A request asking for no window is asked again, whatever is remembered.
        expectAskedAgain(results[2])
    }

    /// A request that may not prompt (authenticationUI fail) is served by a proof it may reuse,
    /// and is errSecInteractionNotAllowed without one.
    @Test func aRequestThatMayNotPromptIsServedByAReusableProof() throws {
        let world = try world()
        let terminal = try ReuseTerminal(
            uid: a, session: Self.sessionCounter.next(), directory: world.daemon.directory)
        let quiet = ["relay", "fail", "gated", "me", "-"]
        let results = try terminal.run(
            as: a, socket: world.daemon.socket, [quiet + ["60"], prove, quiet + ["60"], quiet + ["0"]])
        #expect(results[0].lines.last?.hasPrefix("error -25308") == true, "\(results[0].output)")
        #expect(results[1].lines.last == "a-value", "\(results[1].output)")
        expectReused(results[2])
        #expect(results[3].lines.last?.hasPrefix("error -25308") == true, "\(results[3].output)")
    }

    @Test func anotherTerminalOfTheSameSessionDoesNotReuse() throws {
        let world = try world()
        let session = Self.sessionCounter.next()
        let first = try ReuseTerminal(uid: a, session: session, directory: world.daemon.directory)
        let second = try ReuseTerminal(uid: a, session: session, directory: world.daemon.directory)
        let proved = try first.run(as: a, socket: world.daemon.socket, [prove])
        #expect(proved[0].lines.last == "a-value", "\(proved[0].output)")
        let other = try second.run(as: a, socket: world.daemon.socket, [reread()])
        expectAskedAgain(other[0])
        // And the first terminal still reuses its own.
        let again = try first.run(as: a, socket: world.daemon.socket, [reread()])
        expectReused(again[0])
    }

    @Test func anotherSessionOnTheSameUidDoesNotReuse() throws {
        let world = try world()
        let first = try ReuseTerminal(uid: a, session: Self.sessionCounter.next(), directory: world.daemon.directory)
        let second = try ReuseTerminal(uid: a, session: Self.sessionCounter.next(), directory: world.daemon.directory)
        _ = try first.run(as: a, socket: world.daemon.socket, [prove])
        let other = try second.run(as: a, socket: world.daemon.socket, [reread()])
        expectAskedAgain(other[0])
    }

    @Test func lockClearsTheSessionsProofs() throws {
        let world = try world()
        let terminal = try ReuseTerminal(uid: a, session: Self.sessionCounter.next(), directory: world.daemon.directory)
        let results = try terminal.run(
            as: a, socket: world.daemon.socket, [prove, ["lock"], reread()])
        #expect(results[0].lines.last == "a-value", "\(results[0].output)")
        #expect(results[1].lines == ["ok"], "\(results[1].output)")
        expectAskedAgain(results[2])
    }

    @Test func aCallerWithoutALoginSessionGetsNoReuse() throws {
        let world = try world()
        let terminal = try ReuseTerminal(uid: a, session: nil, directory: world.daemon.directory)
        let results = try terminal.run(
            as: a, socket: world.daemon.socket, [prove, reread()])
        #expect(results[0].lines.last == "a-value", "\(results[0].output)")
        expectAskedAgain(results[1])
    }

    @Test func aDaemonRestartForgetsEveryProof() throws {
        let world = try world()
        let terminal = try ReuseTerminal(uid: a, session: Self.sessionCounter.next(), directory: world.daemon.directory)
        _ = try terminal.run(as: a, socket: world.daemon.socket, [prove])
        world.daemon.stop()
        try world.daemon.start()
        let results = try terminal.run(as: a, socket: world.daemon.socket, [reread()])
        expectAskedAgain(results[0])
    }
}
