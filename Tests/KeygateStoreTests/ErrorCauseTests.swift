import Glibc
import KeygateAudit
import KeygatePolicy
import KeygateStore
import KeygateTesting
import Testing

/// Issue 13 point 3: every failure keeps its cause, which callers match without reading the
/// message. Each test provokes the failure for real and matches the cause.
@Suite struct ErrorCauseTests {
    /// The error `body` throws, or nil when it succeeds.
    static func failure(_ body: () throws -> Void) -> KeygateError? { HostileFileTests.failure(body) }

    static func store(
        _ directory: TemporaryDirectory, _ keyProvider: (any KeyProvider)? = nil
    ) throws(KeygateError) -> SQLiteItemStore {
        try SQLiteItemStore(path: directory.path + "/items.db", keyProvider: keyProvider)
    }

    static func storeWithOneItem(_ directory: TemporaryDirectory) throws(KeygateError) -> (SQLiteItemStore, ItemRecord)
    {
        let store = try store(directory)
        let record = try store.insert([Fixtures.item(Fixtures.fields(), "s3cret")])[0]
        return (store, record)
    }

    // MARK: - SQLite result codes

    /// Another connection holding the write lock past the busy timeout: SQLITE_BUSY, matched by
    /// its primary code.
    @Test func aLockedDatabaseIsBusy() throws {
        let directory = try TemporaryDirectory()
        let holder = try Self.store(directory)
        let waiter = try SQLiteItemStore(path: directory.path + "/items.db", busyTimeoutMilliseconds: 50)
        try holder.executeRawSQL("BEGIN IMMEDIATE")
        defer { try? holder.executeRawSQL("ROLLBACK") }
        // One attempt (a plain SQLITE_BUSY is retried for about 5 s before it is thrown).
        var matched = false
        do {
            try waiter.insert([Fixtures.item(Fixtures.fields(), "v")])
            Issue.record("the insert did not wait for the lock")
        } catch SQLiteResultCode.busy {
            matched = true
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(matched)
    }

    /// A second item with the same primary key: errSecDuplicateItem, caused by the unique index
    /// (SQLITE_CONSTRAINT_UNIQUE, which the primary SQLITE_CONSTRAINT pattern also matches).
    @Test func aDuplicateKeepsTheConstraintCode() throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try Self.storeWithOneItem(directory)
        let error = Self.failure { _ = try store.insert([Fixtures.item(Fixtures.fields(), "again")]) }
        #expect(error?.status == .duplicateItem)
        #expect(error?.sqliteCode == .constraintUnique)
        #expect(error.map { SQLiteResultCode.constraint ~= $0 } == true)
    }

    /// A file that is not a database: SQLITE_NOTADB, and the file is not changed.
    @Test func aFileThatIsNotADatabaseKeepsItsCode() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/items.db"
        let garbage = [UInt8](repeating: 0x5a, count: 4096)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        #expect(write(descriptor, garbage, garbage.count) == garbage.count)
        close(descriptor)
        let error = Self.failure { _ = try SQLiteItemStore(path: path) }
        #expect(error?.sqliteCode?.primary == .notADatabase)
    }

    // MARK: - Named conditions

    /// A database written by a newer Keygate (a higher schema version) is refused as such.
    @Test func aNewerSchemaIsNamed() throws {
        let directory = try TemporaryDirectory()
        try Self.store(directory).executeRawSQL("PRAGMA user_version = 99")
        let error = Self.failure { _ = try Self.store(directory) }
        #expect(error?.status == .notAvailable)
        #expect(error?.condition == .newerSchema)
    }

    /// Another program's database (its own tables, at a schema version Keygate's migrations
    /// would take as theirs) is refused by name at open, before anything in it changes: not its
    /// journal mode, not its version, no table added, no key file made beside it.
    @Test(arguments: [(0, "CREATE TABLE notes (body TEXT)"), (1, "CREATE TABLE items (a)"), (2, "")])
    func anotherProgramsDatabaseIsRefusedAndNotChanged(_ version: Int, _ table: String) throws {
        let directory = try TemporaryDirectory()
        try Self.store(directory).executeRawSQL(
            "DROP TABLE items; DROP TABLE metadata; DROP TABLE keys; \(table); PRAGMA user_version = \(version); "
                + "PRAGMA journal_mode = DELETE")
        let database = directory.path + "/items.db"
        #expect(unlink(database + ".key") == 0)
        let before = try #require(Self.contents(of: database))
        let error = Self.failure { _ = try Self.store(directory) }
        #expect(error?.status == .notAvailable)
        #expect(error?.condition == .foreignDatabase)
        #expect(error?.message.contains(database) == true)
        #expect(Self.contents(of: database) == before, "the database was changed")
        #expect(access(database + ".key", F_OK) != 0, "a key was made beside another program's database")
    }

    /// The bytes of the file at `path`, nil when it cannot be read.
    static func contents(of path: String) -> [UInt8]? {
        let file = open(path, O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { return nil }
        defer { close(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(file, &buffer, buffer.count)
            guard count > 0 else { return count == 0 ? bytes : nil }
            bytes += buffer[0..<count]
        }
    }

    /// A key file others can read is refused before it is used: not private.
    @Test func aWorldReadableKeyIsNamed() throws {
        let directory = try TemporaryDirectory()
        _ = try Self.store(directory)
        #expect(chmod(directory.path + "/items.db.key", 0o644) == 0)
        let error = Self.failure { _ = try Self.store(directory) }
        #expect(error?.condition == .notPrivate)
        let provider = KeyFileProvider(path: directory.path + "/items.db.key", privacy: .unchecked)
        #expect(Self.failure { _ = try provider.key() }?.condition == .notPrivate)
    }

    /// A database file of another user is refused: wrong owner (the tests run as root, who can chown).
    @Test func aDatabaseOfAnotherUserIsNamed() throws {
        let directory = try TemporaryDirectory()
        _ = try Self.store(directory)
        guard chown(directory.path + "/items.db", 65534, 65534) == 0 else {
            Issue.record("cannot chown as uid \(geteuid()): this test needs root")
            return
        }
        #expect(Self.failure { _ = try Self.store(directory) }?.condition == .wrongOwner)
    }

    /// A FIFO in place of the database: not a regular file.
    @Test func aFIFOIsNamed() throws {
        let directory = try TemporaryDirectory()
        #expect(mkfifo(directory.path + "/items.db", 0o600) == 0)
        #expect(Self.failure { _ = try Self.store(directory) }?.condition == .notRegularFile)
    }

    /// The key file removed from a store holding items: the key is missing.
    @Test func aMissingKeyIsNamed() throws {
        let directory = try TemporaryDirectory()
        _ = try Self.storeWithOneItem(directory)
        #expect(unlink(directory.path + "/items.db.key") == 0)
        #expect(Self.failure { _ = try Self.store(directory) }?.condition == .missingKey)
    }

    /// The key file removed from a store whose items were all deleted: its key-check value is
    /// still sealed under the lost key, so the key is missing, and no new key file is written
    /// (one would never pass the key check: the open used to write it, then refuse it as the
    /// wrong key).
    @Test func aMissingKeyOfAnEmptiedStoreIsNamedAndNotReplaced() throws {
        let directory = try TemporaryDirectory()
        do {
            let (store, record) = try Self.storeWithOneItem(directory)
            try store.delete([record.id])
        }
        #expect(unlink(directory.path + "/items.db.key") == 0)
        #expect(Self.failure { _ = try Self.store(directory) }?.condition == .missingKey)
        #expect(access(directory.path + "/items.db.key", F_OK) != 0)
    }

    /// A key file of the wrong length: malformed.
    @Test func aMalformedKeyIsNamed() throws {
        let directory = try TemporaryDirectory()
        _ = try Self.store(directory)
        #expect(truncate(directory.path + "/items.db.key", 40) == 0)
        #expect(Self.failure { _ = try Self.store(directory) }?.condition == .malformedKey)
    }

    /// Another 32-byte key: the store's key-check value does not open, so the key is wrong.
    @Test func aWrongKeyIsNamed() throws {
        let directory = try TemporaryDirectory()
        _ = try Self.storeWithOneItem(directory)
        let other = StaticKeyProvider(key: SecretData.random(count: 32))
        let error = Self.failure { _ = try Self.store(directory, other) }
        #expect(error?.status == .decode)
        #expect(error?.condition == .wrongKey)
    }

    /// The database removed while its key stays: the database was lost.
    @Test func aLostDatabaseIsNamed() throws {
        let directory = try TemporaryDirectory()
        _ = try Self.storeWithOneItem(directory)
        for suffix in ["", "-wal", "-shm"] { unlink(directory.path + "/items.db" + suffix) }
        #expect(Self.failure { _ = try Self.store(directory) }?.condition == .lostDatabase)
    }

    /// A replacement made from a record another writer changed since: a racing writer, on both backends.
    @Test(arguments: Backend.allCases)
    func aRacingWriterIsNamed(_ backend: Backend) throws {
        let store = try TemporaryStore(backend)
        let record = try store.insert([Fixtures.item(Fixtures.fields(), "one")])[0]
        try store.replace([ItemReplacement(replacing: record, fields: record.fields, data: SecretData("two"))])
        let error = Self.failure {
            try store.replace([ItemReplacement(replacing: record, fields: record.fields, data: SecretData("three"))])
        }
        #expect(error?.status == .notAvailable)
        #expect(error?.condition == .racingWriter)
        do {
            try store.replace([ItemReplacement(replacing: record, fields: record.fields, data: SecretData("three"))])
        } catch KeygateError.Condition.racingWriter {
            // matched by the catch pattern
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    /// A delete made from records read before another writer moved one of them (to a group the
    /// deleting caller may not see): nothing is deleted, a racing writer; records as read, and
    /// records already gone, delete as before. On both backends.
    @Test(arguments: Backend.allCases)
    func aDeleteOfAnItemChangedSinceItWasReadDeletesNothing(_ backend: Backend) throws {
        let store = try TemporaryStore(backend)
        let read = try store.insert([
            Fixtures.item(Fixtures.fields(account: "one"), "1"), Fixtures.item(Fixtures.fields(account: "two"), "2"),
        ])
        var moved = read[1].fields
        moved.identity.accessGroup = "group.b"
        try store.replace([ItemReplacement(replacing: read[1], fields: moved, data: SecretData("2"))])
        let error = Self.failure { try store.delete(read) }
        #expect(error?.status == .notAvailable)
        #expect(error?.condition == .racingWriter)
        #expect(try store.items(matching: Fixtures.all).count == 2, "a racing delete deleted something")
        let current = try store.items(matching: Fixtures.all)
        try store.delete([read[0]] + current)
        #expect(try store.items(matching: Fixtures.all).isEmpty)
    }

    /// A row whose access control was edited so it no longer parses: a damaged item.
    @Test func aDamagedRowIsNamed() throws {
        let store = try TemporaryStore(.sqlite)
        let record = try store.insert([Fixtures.item(Fixtures.fields(), "v")])[0]
        try store.damageAccessControl(of: record.id)
        let read = try store.items(matching: Fixtures.all)[0]
        #expect(Self.failure { _ = try store.open(read) }?.condition == .damagedItem)
    }

    /// A record of the store in memory opened by the SQLite store: a foreign record.
    @Test func aForeignRecordIsNamed() throws {
        let directory = try TemporaryDirectory()
        let memory = InMemoryItemStore()
        let record = try memory.insert([Fixtures.item(Fixtures.fields(), "v")])[0]
        #expect(Self.failure { _ = try Self.store(directory).open(record) }?.condition == .foreignRecord)
    }

    // MARK: - libsodium and errno

    /// A ciphertext changed in the file: the AEAD open fails, and libsodium's failure is the cause.
    @Test func aTamperedValueKeepsTheSodiumFailure() throws {
        let directory = try TemporaryDirectory()
        let (store, record) = try Self.storeWithOneItem(directory)
        try store.executeRawSQL("UPDATE items SET value = zeroblob(length(value)) WHERE id = \(record.id.rawValue)")
        let read = try store.items(matching: Fixtures.all)[0]
        let error = Self.failure { _ = try store.open(read) }
        #expect(error?.status == .decode)
        #expect(error?.cause == .sodium(function: "crypto_aead_xchacha20poly1305_ietf_decrypt", result: -1))
    }

    /// A store path under a regular file: mkdir fails, and its errno (ENOTDIR) is the cause.
    @Test func aFailedSystemCallKeepsItsErrno() throws {
        let directory = try TemporaryDirectory()
        let file = directory.path + "/plain"
        close(open(file, O_WRONLY | O_CREAT, 0o600))
        let error = Self.failure { _ = try SQLiteItemStore(path: file + "/sub/items.db") }
        #expect(error?.status == .io)
        #expect(error?.errnoCode == ENOTDIR)
        #expect(error?.cause == .errno(ENOTDIR))
    }

    // MARK: - The error type

    /// Equality and hashing stay by status, whatever the cause; the cause is for matching.
    @Test func equalityIgnoresTheCause() {
        let busy = KeygateError(.notAvailable, "a", cause: .sqlite(.busy))
        let racing = KeygateError(.notAvailable, "b", condition: .racingWriter)
        #expect(busy == racing)
        #expect(busy.hashValue == racing.hashValue)
        #expect(busy.cause != racing.cause)
        #expect(KeygateError(.param, "no cause").cause == nil)
    }

    /// A primary code matches its extended codes; an extended code matches only itself.
    @Test func primaryCodesMatchTheirExtendedCodes() {
        #expect(SQLiteResultCode.busy ~= SQLiteResultCode.busySnapshot)
        #expect(!(SQLiteResultCode.busySnapshot ~= SQLiteResultCode.busy))
        #expect(SQLiteResultCode.constraintUnique.primary == .constraint)
        #expect(!(SQLiteResultCode.locked ~= SQLiteResultCode.busy))
        #expect(SQLiteResultCode.busySnapshot.description == "517 (SQLITE_BUSY, extended)")
    }
}
