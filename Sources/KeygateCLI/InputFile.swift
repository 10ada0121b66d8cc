import Glibc
import KeygatePolicy

/// Reads an input file the user named (a context file, a backup): only a regular file, opened
/// without blocking (a FIFO or device is refused, never waited on), and never more than a
/// bound, so a hostile or mistaken path cannot hang keygate or exhaust its memory.
enum InputFile {
    /// The largest context file read: 1 MiB.
    static let contextLimit = 1 << 20
    /// The largest backup file read: 256 MiB.
    static let backupLimit = 256 << 20

    /// The file's bytes.
    /// - Throws: ``InputFileError`` naming the file: it cannot be opened, is not a regular
    ///   file, or is larger than `limit` bytes.
    static func read(_ path: String, limit: Int) throws(InputFileError) -> [UInt8] {
        func failure(_ problem: String) -> InputFileError {
            InputFileError(file: path, line: 0, column: 0, field: "", problem: problem)
        }
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("cannot read the file: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw failure("cannot inspect the file") }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw failure("not a regular file (a FIFO, device or directory); refusing to read it")
        }
        guard info.st_size <= limit else { throw failure("the file is larger than \(describe(limit))") }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            // Never more than limit + 1 bytes, even if the file grows while it is read.
            let wanted = min(chunk.count, limit + 1 - bytes.count)
            let got = Glibc.read(descriptor, &chunk, wanted)
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw failure("cannot read the file: \(String(cString: strerror(errno)))") }
            if got == 0 { break }
            bytes += chunk[0..<got]
            guard bytes.count <= limit else { throw failure("the file is larger than \(describe(limit))") }
        }
        return bytes
    }

    /// The file as UTF-8 text.
    static func text(_ path: String, limit: Int) throws(InputFileError) -> String {
        let bytes = try read(path, limit: limit)
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw InputFileError(file: path, line: 0, column: 0, field: "", problem: "the file is not UTF-8 text")
        }
        return text
    }

    /// The context file at `path` (`evaluate`, `policy explain --context`), at most
    /// ``contextLimit`` bytes.
    /// - Throws: ``InputFileError`` naming the file, and the line and field of a bad value.
    static func context(_ path: String) throws(InputFileError) -> ContextFile {
        try ContextFile(parsing: text(path, limit: contextLimit), file: path)
    }

    /// `1 MiB`, `256 MiB`, or a byte count.
    static func describe(_ bytes: Int) -> String {
        bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : "\(bytes) bytes"
    }
}
