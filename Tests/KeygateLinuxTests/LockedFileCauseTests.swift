import Foundation
import KeygateLinux
import KeygatePolicy
import KeygateTesting
import Testing

/// Issue 13 point 3: the shared ledger's and proof records' files keep the cause of a failure.
@Suite struct LockedFileCauseTests {
    /// A ledger file others can read is not trusted, and says why.
    @Test func aFileOthersCanReadIsNamed() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/attempts.json"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("{}".utf8)))
        #expect(chmod(path, 0o644) == 0)
        let error = #expect(throws: KeygateError.self) { try LockedFile(path: path).read() }
        #expect(error?.condition == .notPrivate)
    }

    /// A directory in place of the file is not a regular file.
    @Test func aDirectoryInPlaceOfTheFileIsNamed() throws {
        let directory = try TemporaryDirectory()
        #expect(mkdir(directory.path + "/attempts.json", 0o700) == 0)
        let error = #expect(throws: KeygateError.self) {
            try LockedFile(path: directory.path + "/attempts.json").read()
        }
        #expect(error?.condition == .notRegularFile)
    }

    /// A file in a directory that does not exist cannot be locked or written: errno ENOENT.
    @Test func aMissingDirectoryKeepsTheErrno() throws {
        let directory = try TemporaryDirectory()
        let file = LockedFile(path: directory.path + "/missing/attempts.json")
        let locking = #expect(throws: KeygateError.self) { try file.withLock {} }
        #expect(locking?.errnoCode == ENOENT)
        let writing = #expect(throws: KeygateError.self) { try file.write(Data("{}".utf8)) }
        #expect(writing?.cause == .errno(ENOENT))
    }

    /// A proof-record directory others can read is refused as not private.
    @Test func aSharedProofDirectoryIsNamed() throws {
        let directory = try TemporaryDirectory()
        let shared = directory.path + "/proofs"
        #expect(mkdir(shared, 0o755) == 0)
        #expect(chmod(shared, 0o755) == 0)
        let error = #expect(throws: KeygateError.self) { try ProofRecords.open(directory: shared, environment: [:]) }
        #expect(error?.status == .io)
        #expect(error?.condition == .notPrivate)
    }
}
