import Foundation
import Glibc
import KeygateTesting
import Testing

/// Issue 9 points 6, 7 and 9 through the binary: hostile files are refused with a message
/// naming them, FIFOs never hang keygate, and inputs are bounded.
@Suite struct HostileInputTests {
    /// Runs keygate under `timeout 30`, so a hang fails the test (exit 124) instead of blocking it.
    static func run(
        _ arguments: [String], stdin: Data = Data(), environment: [String: String] = [:]
    ) throws -> KeygateBinary.Result {
        try KeygateBinary.run(
            ["30", KeygateBinary.url.path] + arguments, stdin: stdin, environment: environment,
            executable: URL(fileURLWithPath: "/usr/bin/timeout"))
    }

    @Test func aFIFOAsTheContextFileIsRefusedNotWaitedOn() throws {
        let directory = try TemporaryDirectory()
        let fifo = directory.url.appendingPathComponent("ctx.json").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let result = try Self.run(["evaluate", "--context", fifo])
        #expect(result.status == 2, "exit \(result.status) (124 is a hang)")
        #expect(result.lastErrorLine.contains("\(fifo): not a regular file"))
        #expect(result.lastErrorLine.hasSuffix("(errSecParam -50)"))
    }

    @Test func aFIFOAsTheBackupFileIsRefusedNotWaitedOn() throws {
        let world = try CLIWorld(password: nil)
        let fifo = world.directory.url.appendingPathComponent("backup.kgb").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let result = try Self.run(["import", fifo, "--backup-passphrase-fd", "0"], environment: world.environment)
        // A bad input file: exit 2, as README and the man page's EXIT STATUS give.
        #expect(result.status == 2, "exit \(result.status) (124 is a hang): \(result.stderr)")
        #expect(result.lastErrorLine.contains("\(fifo): not a regular file"))
    }

    @Test func aFIFOAsTheStoreOrTrailIsRefusedNotWaitedOn() throws {
        for name in ["items.db", "audit.jsonl"] {
            let world = try CLIWorld(password: nil)
            #expect(try world.add("api", "me", Data("v".utf8)).status == 0)
            let fifo = world.data + "/keygate/" + name
            try FileManager.default.removeItem(atPath: fifo)
            #expect(mkfifo(fifo, 0o600) == 0)
            let result = try Self.run(
                ["add", "--service", "api", "--account", "other"], environment: world.environment)
            #expect(result.status != 0 && result.status != 124, "exit \(result.status) (124 is a hang)")
            #expect(result.lastErrorLine.contains("\(fifo) is not a regular file"), "\(result.lastErrorLine)")
        }
    }

    /// A trail another user planted (0666) is never extended: the add is refused, naming it.
    @Test func aTrailOthersCanWriteStopsTheStore() throws {
        let world = try CLIWorld(password: nil)
        try FileManager.default.createDirectory(
            atPath: world.data + "/keygate", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        #expect(FileManager.default.createFile(atPath: world.audit, contents: nil))
        chmod(world.audit, 0o666)
        let result = try world.add("api", "me", Data("v".utf8))
        #expect(result.status == 1)
        #expect(result.lastErrorLine.contains("chmod 600 \(world.audit)"), "\(result.lastErrorLine)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: world.audit)).isEmpty)
    }
}

extension HostileInputTests {
    /// 200 MB on standard input took 16 s and 847 MB: the value is read with a bound of the
    /// store's limit (16 MiB) plus one byte, and refused.
    @Test func aValueOverTheLimitIsRefused() throws {
        let world = try CLIWorld(password: nil)
        let result = try world.add("api", "big", Data(count: 16 * 1024 * 1024 + 1))
        #expect(result.status == 8, "\(result.stderr)")
        #expect(result.lastErrorLine.contains("larger than the limit of 16 MiB"))
        #expect(try world.run(["list"]).stdoutText.isEmpty, "nothing was stored")
    }

    @Test func aContextFileOverOneMiBIsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("ctx.json", contents: "{}" + String(repeating: " ", count: 1 << 20))
        let result = try Self.run(["evaluate", "--context", path])
        #expect(result.status == 2)
        #expect(result.lastErrorLine.contains("\(path): the file is larger than 1 MiB"))
        #expect(result.lastErrorLine.hasSuffix("(errSecParam -50)"))
    }
}
