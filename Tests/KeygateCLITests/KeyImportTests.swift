import Foundation
import Glibc
import KeygateTesting
import Testing

/// `keygate key import` (issue 31, point 6): an existing unencrypted OpenSSH private key, made by
/// `ssh-keygen`, handed to the keeper: listed as imported, the same public key, its signatures
/// verified by `ssh-keygen -Y verify` with the original `.pub`; what cannot be imported is refused
/// and changes nothing.
@Suite struct KeyImportTests {
    static func keygen(_ world: CLIWorld, _ arguments: [String], name: String) throws -> String {
        let path = world.directory.path + "/" + name
        let made = try Tool.run("/usr/bin/ssh-keygen", ["-q", "-f", path, "-C", "imported"] + arguments)
        try #require(made.status == 0, "\(made.stderr)")
        return path
    }

    @Test(arguments: [["-t", "ed25519"], ["-t", "ecdsa", "-b", "256"]])
    func anOpenSSHKeyIsImportedAndSignsAsItself(_ type: [String]) throws {
        let world = try CLIWorld()
        let file = try Self.keygen(world, type + ["-N", ""], name: "id")
        let imported = try world.run(
            ["key", "import", "--label", "laptop"], stdin: try Data(contentsOf: URL(fileURLWithPath: file)))
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdoutText.contains(#""imported": true"#), "\(imported.stdoutText)")
        let original = try String(contentsOfFile: file + ".pub", encoding: .utf8).split(separator: " ").prefix(2)
        let ours = try world.run(["key", "public", "--label", "laptop"]).stdoutText.split(separator: " ").prefix(2)
        #expect(Array(ours) == Array(original), "the same public key")
        let agent = try SSHAgentProcess(world, passphrases: nil)
        defer { agent.stop() }
        let message = try world.directory.file("message", contents: "signed by an imported key\n")
        let signed = try Tool.run(
            "/usr/bin/ssh-keygen", ["-Y", "sign", "-n", "file", "-f", file + ".pub", message],
            environment: ["SSH_AUTH_SOCK": agent.socket])
        #expect(signed.status == 0, "\(signed.stderr)\n\(agent.logText)")
        let allowed = try world.directory.file("allowed", contents: "me " + original.joined(separator: " ") + "\n")
        let verified = try Tool.run(
            "/usr/bin/ssh-keygen", ["-Y", "verify", "-f", allowed, "-I", "me", "-n", "file", "-s", message + ".sig"],
            stdin: "signed by an imported key\n")
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
    }

    /// A passphrase-protected key, an RSA key and a file that is not a key are refused with a
    /// message naming why; nothing is added.
    @Test func whatCannotBeImportedIsRefused() throws {
        let world = try CLIWorld()
        let encrypted = try Self.keygen(world, ["-t", "ed25519", "-N", "a passphrase"], name: "encrypted")
        let rsa = try Self.keygen(world, ["-t", "rsa", "-b", "2048", "-N", ""], name: "rsa")
        for (file, why, status) in [
            (encrypted, "encrypted with a passphrase", Int32(8)), (rsa, "ssh-rsa", Int32(1)),
            (encrypted + ".pub", "no BEGIN and END OPENSSH PRIVATE KEY lines", Int32(8)),
        ] {
            let result = try world.run(
                ["key", "import", "--label", "x"], stdin: try Data(contentsOf: URL(fileURLWithPath: file)))
            #expect(result.status == status, "\(file): \(result.stderr)")
            #expect(result.lastErrorLine.contains(why), "\(result.stderr)")
            #expect(!result.stderr.contains("PRIVATE KEY-----\n"), "the key is never echoed")
        }
        #expect(try world.run(["key", "list"]).stdoutText.isEmpty)
    }
}
