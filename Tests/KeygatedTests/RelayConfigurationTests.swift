import Foundation
import Glibc
import Testing

/// The relay's configuration keys: `prompt-timeout` (1–3600 s), `max-prompts` and
/// `max-prompts-per-user` (1–4096); a value out of bounds refuses to start, naming the line.
@Suite struct RelayConfigurationTests {
    func refusal(_ config: String) throws -> (status: Int32, log: String) {
        try DaemonFixture.startRefused(config: config)
    }

    @Test(arguments: [
        ("prompt-timeout = 0\n", "keygated.conf:1: prompt-timeout: '0' is not a whole number in 1...3600"),
        ("# x\nprompt-timeout = 3601\n", "keygated.conf:2: prompt-timeout: '3601'"),
        ("max-prompts = 0\n", "keygated.conf:1: max-prompts: '0' is not a whole number in 1...4096"),
        ("max-prompts-per-user = many\n", "keygated.conf:1: max-prompts-per-user: 'many'"),
    ])
    func anOutOfBoundsValueRefusesToStartNamingTheLine(config: String, message: String) throws {
        let refused = try refusal(config)
        #expect(refused.status == 78)
        #expect(refused.log.contains(message), "\(refused.log)")
    }

    @Test func theKeysAreAccepted() throws {
        let daemon = try DaemonFixture(config: "prompt-timeout = 3600\nmax-prompts = 4096\nmax-prompts-per-user = 1\n")
        try daemon.start()
        #expect(daemon.isRunning)
    }
}
