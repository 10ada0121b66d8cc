import Foundation
import Glibc
import Keygate
import Testing

/// What one caller can and cannot reach through (or around) the daemon.
@Suite struct IsolationTests {
    @Test func aClientUidCannotReadOrWriteAnyFileOfTheStateDirectory() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        #expect(try daemon.probe(as: DaemonFixture.userA, "add", "svc", "acc", "secret-a").lines == ["ok"])
        #expect(try daemon.probe(as: DaemonFixture.userB, "add", "svc", "acc", "secret-b").lines == ["ok"])
        var paths = [daemon.state]
        let enumerator = try #require(FileManager.default.enumerator(atPath: daemon.state))
        while let relative = enumerator.nextObject() as? String { paths.append(daemon.state + "/" + relative) }
        // The store, its key, WAL and the per-uid directories of both users exist.
        #expect(paths.contains { $0.hasSuffix("/users/\(DaemonFixture.userA)/items.db.key") })
        #expect(paths.contains { $0.hasSuffix("/users/\(DaemonFixture.userB)/items.db") })
        // As user A: nothing can be listed, read, written or created, its own directory included.
        let script = """
            for f; do
              if [ -d "$f" ]; then ls "$f" >/dev/null 2>&1 && echo "listed $f"; touch "$f/x" 2>/dev/null && echo "created in $f"
              else cat "$f" >/dev/null 2>&1 && echo "read $f"; fi
              [ -w "$f" ] && echo "writable $f"
            done
            echo done
            """
        let result = try daemon.run(as: DaemonFixture.userA, "/bin/sh", ["-c", script, "sh"] + paths)
        #expect(result.lines == ["done"], "user A reached: \(result.output)")
        // And the daemon keeps every directory it made at 0700 and root-owned.
        for path in paths {
            var info = stat()
            #expect(lstat(path, &info) == 0)
            #expect(info.st_uid == 0, "\(path) is owned by \(info.st_uid)")
            if info.st_mode & S_IFMT == S_IFDIR { #expect(info.st_mode & 0o777 == 0o700, "\(path)") }
        }
    }

    @Test func userBNeverSeesOrChangesUserAsItems() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        let a = DaemonFixture.userA
        let b = DaemonFixture.userB
        #expect(try daemon.probe(as: a, "add", "mail", "me", "a-secret").lines == ["ok"])
        #expect(try daemon.probe(as: b, "get", "mail", "me").lines.first?.hasPrefix("error -25300") == true)
        #expect(try daemon.probe(as: b, "count").lines.first?.hasPrefix("error -25300") == true)
        #expect(
            try daemon.probe(as: b, "update", "mail", "me", "b-was-here").lines.first?.hasPrefix("error -25300") == true
        )
        #expect(try daemon.probe(as: b, "delete", "mail", "me").lines.first?.hasPrefix("error -25300") == true)
        // B's own item of the same name lives in B's own store.
        #expect(try daemon.probe(as: b, "add", "mail", "me", "b-secret").lines == ["ok"])
        #expect(try daemon.probe(as: a, "get", "mail", "me").lines == ["a-secret"])
        #expect(try daemon.probe(as: b, "get", "mail", "me").lines == ["b-secret"])
        #expect(try daemon.probe(as: b, "delete", "mail", "me").lines == ["ok"])
        #expect(try daemon.probe(as: a, "get", "mail", "me").lines == ["a-secret"])
        #expect(try daemon.probe(as: a, "count").lines == ["1"])
    }

    @Test func itemOperationsWorkOnTheCallersOwnStore() throws {
        let daemon = try DaemonFixture()
        try daemon.start()
        let a = DaemonFixture.userA
        #expect(try daemon.probe(as: a, "add", "api", "me", "v1").lines == ["ok"])
        let duplicate = try daemon.probe(as: a, "add", "api", "me", "v2")
        #expect(duplicate.status == 1)
        #expect(duplicate.lines.first?.hasPrefix("error -25299") == true)
        #expect(try daemon.probe(as: a, "update", "api", "me", "v3").lines == ["ok"])
        #expect(try daemon.probe(as: a, "get", "api", "me").lines == ["v3"])
        #expect(try daemon.probe(as: a, "delete", "api", "me").lines == ["ok"])
        #expect(try daemon.probe(as: a, "get", "api", "me").lines.first?.hasPrefix("error -25300") == true)
    }

    /// PAM runs for the peer uid's own account name: a uid without a passwd entry cannot be
    /// authenticated at all, so the read is denied (fail closed), never served.
    @Test func anItemWithAccessControlIsDeniedForAUidWithoutAUserName() throws {
        let daemon = try DaemonFixture(config: "device-state = unlocked\n")
        try daemon.start()
        let a = DaemonFixture.userA
        #expect(try daemon.probe(as: a, "add", "gated", "me", "v", "presence").lines == ["ok"])
        let read = try daemon.probe(as: a, "get", "gated", "me")
        #expect(read.status == 1)
        #expect(read.lines.first?.hasPrefix("error -25291") == true, "\(read.output)")
        #expect(!read.output.contains("v\n"))
    }

    @Test(arguments: ["auto", "pidfd_open"])
    func statusReportsTheCallerAsTheKernelSeesIt(pidfdSource: String) throws {
        let daemon = try DaemonFixture(config: "pidfd-source = \(pidfdSource)\n")
        try daemon.start()
        let result = try daemon.probe(as: DaemonFixture.userB, "status")
        let lines = result.lines
        #expect(lines.count == 3, "\(result.output)")
        guard lines.count == 3 else { return }
        #expect(lines[0].hasPrefix("mode=daemon uid=\(DaemonFixture.userB) gid=\(DaemonFixture.userB) pid="))
        #expect(lines[0].hasSuffix(pidfdSource == "auto" ? "pidfd=SO_PEERPIDFD" : "pidfd=pidfd_open"))
        #expect(lines[1] == "exe=" + URL(fileURLWithPath: DaemonFixture.probePath).resolvingSymlinksInPath().path)
        #expect(lines[2] == "version=keygated \(KeygateVersion.current) (protocol 4)")
    }
}
