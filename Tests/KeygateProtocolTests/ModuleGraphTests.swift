import Dispatch
import Foundation
import Glibc
import Testing

/// The wire protocol and the client depend on no store and no facade (issue 28 point 5): the
/// targets they depend on, followed through Package.swift as `swift package dump-package`
/// reads it, hold neither `KeygateStore`, `Keygate`, `KeygateAudit` nor SQLite or libsodium, so
/// an app that links only KeygateClient links none of them.
@Suite struct ModuleGraphTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Every target's direct target dependencies, from the manifest.
    static func dependencies() throws -> [String: [String]] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // A scratch path of its own: the running `swift test` holds the lock of the package's.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("keygate-dump-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        process.arguments = [
            "swift", "package", "dump-package", "--package-path", root.path, "--scratch-path", scratch,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Bounded: a manifest not read in 60 s ends the process, and the test fails below.
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        watchdog.cancel()
        try #require(process.terminationStatus == 0, "swift package dump-package failed")
        let manifest = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let targets = try #require(manifest["targets"] as? [[String: Any]])
        var graph: [String: [String]] = [:]
        for target in targets {
            guard let name = target["name"] as? String else { continue }
            let dependencies = (target["dependencies"] as? [[String: Any]]) ?? []
            graph[name] = dependencies.compactMap { dependency in
                (dependency["byName"] as? [Any])?.first as? String ?? (dependency["target"] as? [Any])?.first as? String
            }
        }
        return graph
    }

    /// `target` and everything it depends on, transitively.
    static func closure(_ target: String, _ graph: [String: [String]]) -> Set<String> {
        var seen: Set<String> = []
        var stack = [target]
        while let next = stack.popLast() {
            guard seen.insert(next).inserted else { continue }
            stack += graph[next] ?? []
        }
        return seen
    }

    @Test func theProtocolAndTheClientReachNoStoreAndNoFacade() throws {
        let graph = try Self.dependencies()
        let forbidden: Set<String> = ["KeygateStore", "Keygate", "KeygateAudit", "CSQLite", "CSodium", "CNettle"]
        for target in ["KeygateProtocol", "KeygateClient"] {
            let reached = Self.closure(target, graph)
            #expect(reached.contains("KeygateItems"), "\(target): \(reached.sorted())")
            #expect(
                reached.isDisjoint(with: forbidden), "\(target) reaches \(reached.intersection(forbidden).sorted())")
        }
        // The daemon, for contrast, reaches the store: the check reads the real graph.
        #expect(Self.closure("keygated", graph).contains("KeygateStore"))
    }
}
