import Foundation
import Glibc
import KeygateTesting
import Testing

/// Session 25, defects 3 and 4: a failed `export` leaves no backup behind and names the errno;
/// `import` checks its file before it opens (or creates) a store.
@Suite struct BackupFileTests {
    /// Runs `keygate ARGUMENTS` after `limits` (shell commands such as `ulimit -f N`), with
    /// `passphrase` readable on descriptor 3.
    static func run(
        _ world: CLIWorld, _ arguments: [String], limits: String = "", passphrase: String
    ) throws -> KeygateBinary.Result {
        try KeygateBinary.run(
            arguments, environment: world.environment, descriptor3: Data((passphrase + "\n").utf8), shellPrefix: limits)
    }

    /// A write that fails (the file size limit, with SIGXFSZ ignored) leaves neither the
    /// backup nor a temporary file, names the file and errno, and a retry succeeds.
    @Test func aFailedExportLeavesNothingBehind() throws {
        let world = try CLIWorld()
        let big = Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        #expect(try world.add("api", "big", big).status == 0)
        let folder = world.directory.url.appendingPathComponent("backups").path
        #expect(mkdir(folder, 0o700) == 0)
        let backup = folder + "/backup.kg"
        let export = ["export", "--to", backup, "--backup-passphrase-fd", "3"]
        // dash counts `ulimit -f` in 512-byte blocks: 2 MiB, below the 3 MiB backup.
        var result = try Self.run(world, export, limits: "trap '' XFSZ; ulimit -f 4096;", passphrase: "backup-pw")
        #expect(result.status != 0)
        #expect(result.lastErrorLine.contains("cannot write \(backup): File too large"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == [], "nothing is left behind")
        result = try Self.run(world, export, passphrase: "backup-pw")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["backup.kg"])
        var status = stat()
        #expect(stat(backup, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o600)
        #expect(status.st_size > 3 << 20)
        // An existing file is still never overwritten, and is left as it is.
        result = try Self.run(world, export, passphrase: "backup-pw")
        #expect(result.status == 1)
        #expect(result.lastErrorLine.contains("cannot create \(backup): File exists"), "\(result.stderr)")
        var again = stat()
        #expect(stat(backup, &again) == 0)
        #expect(again.st_ino == status.st_ino && again.st_size == status.st_size)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["backup.kg"])
    }

    /// A backup file that is missing, not a regular file or too large is a bad input file
    /// (exit 2) naming it, and no store or key is created.
    @Test(arguments: ["missing", "directory", "too large"])
    func aBadImportFileIsRefusedBeforeAnyStore(_ problem: String) throws {
        let world = try CLIWorld()
        var path = world.directory.url.appendingPathComponent("backup.kg").path
        switch problem {
        case "directory": #expect(mkdir(path, 0o700) == 0)
        case "too large":
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            #expect(truncate(path, (256 << 20) + 1) == 0)
        default: path = "/nonexistent/backup.kg"
        }
        let result = try Self.run(world, ["import", path, "--backup-passphrase-fd", "3"], passphrase: "backup-pw")
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.lastErrorLine.contains(path), "\(result.stderr)")
        #expect(access(world.store, F_OK) != 0, "no store is created")
        #expect(access(world.store + ".key", F_OK) != 0, "no key is created")
    }
}
