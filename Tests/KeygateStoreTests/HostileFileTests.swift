import Foundation
import Glibc
import KeygateAudit
import KeygatePolicy
import KeygateStore
import KeygateTesting
import Synchronization
import Testing

/// Issue 9 points 6 and 7: files and directories another user can write, or that are not
/// regular files, are refused with a message naming the path and the fix, never used and
/// never waited on.
@Suite struct HostileFileTests {
    static let otherUser: uid_t = 65534

    static func event() -> AuditEvent {
        AuditEvent(kind: .read, item: .init(accessGroup: "g", account: "me", service: "api"), decision: .allow)
    }

    /// The error `body` throws, or nil when it succeeds.
    static func failure(_ body: () throws -> Void) -> KeygateError? {
        do {
            try body()
            return nil
        } catch let error as KeygateError {
            return error
        } catch {
            Issue.record("not a KeygateError: \(error)")
            return nil
        }
    }

    /// Runs `body` on its own thread; when it has not returned after 20 s it is reported as a
    /// hang, and the FIFO at `fifo` is opened at both ends until it returns, so the test run
    /// goes on.
    static func withoutHanging(
        _ fifo: String, _ body: @escaping @Sendable () -> KeygateError?
    ) -> KeygateError? {
        let result = Mutex<KeygateError??>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let error = body()
            result.withLock { $0 = .some(error) }
            done.signal()
        }.start()
        if done.wait(timeout: .now() + 20) == .timedOut {
            Issue.record("hung on the FIFO \(fifo)")
            while done.wait(timeout: .now() + 0.1) == .timedOut {
                let descriptor = open(fifo, O_RDWR | O_NONBLOCK)
                if descriptor >= 0 { close(descriptor) }
            }
        }
        return result.withLock { $0 } ?? nil
    }

    // MARK: - Point 6: not the caller's own, or not private

    /// A pre-created 0666 trail (another user's forged records would verify intact) is refused.
    @Test func aTrailOthersCanWriteIsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        chmod(path, 0o666)
        let error = Self.failure { try JSONLinesAuditSink(path: path).append(Self.event(), at: Timestamp(seconds: 1)) }
        #expect(error?.status == .io)
        #expect(error?.message.contains("chmod 600 \(path)") == true, "\(String(describing: error))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).isEmpty, "nothing was appended")
        #expect(throws: KeygateError.self) { try AuditTrailFile.verify(at: path) }
        // The documented opt-out accepts it.
        try JSONLinesAuditSink(path: path, privacy: .unchecked).append(Self.event(), at: Timestamp(seconds: 1))
        #expect(try AuditTrailFile.verify(at: path, privacy: .unchecked) == .intact(records: 1))
    }

    @Test func aGroupWritableDirectoryIsRefused() throws {
        let directory = try TemporaryDirectory()
        let store = directory.path + "/shared"
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: false)
        chmod(store, 0o775)
        let error = Self.failure { _ = try SQLiteItemStore(path: store + "/items.db") }
        #expect(error?.status == .notAvailable)
        #expect(error?.message.contains("chmod 700 \(store)") == true, "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: store + "/items.db"), "nothing was created")
        let trail = Self.failure {
            try JSONLinesAuditSink(path: store + "/audit.jsonl").append(Self.event(), at: Timestamp(seconds: 1))
        }
        #expect(trail?.message.contains("chmod 700 \(store)") == true)
        _ = try SQLiteItemStore(path: store + "/items.db", privacy: .unchecked)
    }

    /// Each file of a store or trail that belongs to another user is refused, naming it.
    @Test(arguments: ["items.db", "items.db-wal", "items.db-shm", "items.db.key", "audit.jsonl", "audit.jsonl.head"])
    func aFileOfAnotherUserIsRefused(_ name: String) throws {
        let directory = try TemporaryDirectory()
        let store = directory.path + "/items.db"
        let trail = directory.path + "/audit.jsonl"
        let sink = JSONLinesAuditSink(path: trail)
        do {
            let opened = try SQLiteItemStore(path: store)
            try opened.insert([Fixtures.item(Fixtures.fields(), "v")])
            try sink.append(Self.event(), at: Timestamp(seconds: 1))
        }
        let path = directory.path + "/" + name
        if !FileManager.default.fileExists(atPath: path) {
            #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]))
        }
        #expect(chown(path, Self.otherUser, Self.otherUser) == 0)
        let error =
            name.hasPrefix("audit")
            ? Self.failure { try sink.append(Self.event(), at: Timestamp(seconds: 2)) }
            : Self.failure { _ = try SQLiteItemStore(path: store) }
        #expect(error?.message.contains("\(path) belongs to uid 65534") == true, "\(String(describing: error))")
        #expect(error?.message.contains("chown") == true)
    }

    @Test func aKeyFileOfAnotherUserIsRefusedByItsProvider() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.key"
        _ = try KeyFileProvider(path: path).key()
        #expect(chown(path, Self.otherUser, Self.otherUser) == 0)
        let error = Self.failure { _ = try KeyFileProvider(path: path).key() }
        #expect(error?.status == .notAvailable)
        #expect(error?.message.contains("belongs to uid 65534") == true)
    }

    // MARK: - Point 7: FIFOs and devices

    @Test(arguments: ["items.db", "items.db.key", "audit.jsonl", "audit.jsonl.head"])
    func aFIFOIsRefusedNotWaitedOn(_ name: String) throws {
        let directory = try TemporaryDirectory()
        let store = directory.path + "/items.db"
        let trail = directory.path + "/audit.jsonl"
        if name == "items.db.key" { _ = try SQLiteItemStore(path: store) }
        let fifo = directory.path + "/" + name
        try? FileManager.default.removeItem(atPath: fifo)
        #expect(mkfifo(fifo, 0o600) == 0)
        let error = Self.withoutHanging(fifo) {
            name.hasPrefix("audit")
                ? Self.failure { try JSONLinesAuditSink(path: trail).append(Self.event(), at: Timestamp(seconds: 1)) }
                : Self.failure { _ = try SQLiteItemStore(path: store) }
        }
        #expect(error?.message.contains("\(fifo) is not a regular file") == true, "\(String(describing: error))")
        if name.hasPrefix("audit") {
            #expect(Self.withoutHanging(fifo) { Self.failure { _ = try AuditTrailFile.verify(at: trail) } } != nil)
        }
    }

    @Test func aFIFOInPlaceOfAKeyFileIsRefusedByItsProvider() throws {
        let directory = try TemporaryDirectory()
        let fifo = directory.path + "/items.key"
        #expect(mkfifo(fifo, 0o600) == 0)
        let error = Self.withoutHanging(fifo) { Self.failure { _ = try KeyFileProvider(path: fifo).key() } }
        #expect(error?.message.contains("is not a regular file (a FIFO)") == true)
    }

    @Test func aDeviceInPlaceOfTheDatabaseIsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.db"
        #expect(mknod(path, S_IFCHR | 0o600, dev_t(1 << 8 | 3)) == 0)  // 1, 3: /dev/null
        let error = Self.failure { _ = try SQLiteItemStore(path: path) }
        #expect(error?.message.contains("is not a regular file (a character device)") == true)
    }
}
