import Foundation
import KeygateTesting
import Synchronization
import Testing

/// The embedded store shared by processes: racing adds, a killed writer, and the secret
/// never leaving the value's own output.
@Suite struct StoreProcessTests {
    @Test func processesRacingAnAddLeaveOneRow() throws {
        let world = try CLIWorld(password: nil)
        let environment = world.environment
        let codes = Mutex<[Int32]>([])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 6) { index in
            let result = try? KeygateBinary.run(
                ["add", "--service", "race", "--account", "same"], stdin: Data("v\(index)".utf8),
                environment: environment)
            codes.withLock { $0.append(result?.status ?? -1) }
            if let result, result.status != 0 && result.status != 4 { failures.withLock { $0.append(result.stderr) } }
        }
        let all = codes.withLock { $0 }
        #expect(all.filter { $0 == 0 }.count == 1, "\(all) \(failures.withLock { $0 })")
        #expect(all.filter { $0 == 4 }.count == 5, "\(all) \(failures.withLock { $0 })")
        #expect(try world.run(["list"]).stdoutText.split(separator: "\n").count == 1)
        #expect(try world.run(["audit", "verify"]).status == 0, "concurrent writers keep one intact trail")
    }

    @Test func aWriterKilledMidLoopLosesNoCommittedItem() throws {
        let world = try CLIWorld(password: nil)
        let log = world.directory.url.appendingPathComponent("committed.log").path
        let script = """
            i=0
            while true; do
              i=$((i+1))
              printf 'value-%d' "$i" | '\(KeygateBinary.url.path)' add --service loop --account "a$i" && echo "a$i" >> '\(log)'
            done
            """
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", script]
        shell.environment = world.environment
        shell.standardError = FileHandle.nullDevice
        try shell.run()
        Thread.sleep(forTimeInterval: 2.5)
        // Kill the loop and whatever keygate it is running, mid-write.
        kill(-shell.processIdentifier, SIGKILL)
        _ = try? Process.run(
            URL(fileURLWithPath: "/usr/bin/pkill"), arguments: ["-KILL", "-P", "\(shell.processIdentifier)"])
        kill(shell.processIdentifier, SIGKILL)
        shell.waitUntilExit()
        Thread.sleep(forTimeInterval: 0.2)
        let committed =
            (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? []
        #expect(committed.count > 3, "the loop ran")
        let listed = try world.run(["list", "--service", "loop"])
        #expect(listed.status == 0, "the database opens cleanly: \(listed.stderr)")
        for account in committed {
            #expect(listed.stdoutText.contains("\"account\": \"\(account)\""), "committed item \(account) was lost")
        }
        let last = try #require(committed.last)
        #expect(
            try world.run(["get", "--service", "loop", "--account", last]).stdout
                == Data("value-\(last.dropFirst())".utf8))
    }

    @Test func theSecretNeverAppearsInAnyOtherOutput() throws {
        let world = try CLIWorld()
        let secret = "SECRET-\(UUID().uuidString)"
        var outputs: [String] = []
        func run(_ arguments: [String], stdin: Data = Data(), passphrase: String? = nil, valueOnStdout: Bool = false)
            throws
        {
            let result = try world.run(arguments, stdin: stdin, passphrase: passphrase)
            outputs.append(result.stderr)
            if !valueOnStdout { outputs.append(result.stdoutText) }
        }
        try run(
            ["add", "--service", "s", "--account", "a", "--access-control", "devicePasscode"], stdin: Data(secret.utf8))
        try run(["add", "--service", "s", "--account", "a"], stdin: Data(secret.utf8))
        try run(["get", "--service", "s", "--account", "a"], passphrase: "wrong")
        try run(["get", "--service", "s", "--account", "a"], passphrase: "s3cret", valueOnStdout: true)
        try run(["update", "--service", "s", "--account", "a"], stdin: Data((secret + "2").utf8), passphrase: "s3cret")
        try run(["list"])
        try run(["audit", "show"])
        try run(["audit", "verify"])
        try run(["--device-state", "locked", "get", "--service", "s", "--account", "a"])
        try run(["delete", "--service", "s", "--account", "a"])
        for output in outputs { #expect(!output.contains(secret), "the secret leaked: \(output)") }
        for file in [world.store, world.audit, world.audit + ".head"] {
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: file))) ?? Data()
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "the secret is in \(file)")
        }
        let wal = (try? Data(contentsOf: URL(fileURLWithPath: world.store + "-wal"))) ?? Data()
        #expect(wal.range(of: Data(secret.utf8)) == nil)
    }
}
