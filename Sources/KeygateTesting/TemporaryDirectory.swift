public import Foundation

/// A fresh private directory (mode 0700) under the system's temporary directory, removed with
/// everything in it when the value is released.
///
/// Keep the value, not only its path, for as long as the files are used: the directory lives
/// exactly as long as the object.
public final class TemporaryDirectory: Sendable {
    /// The directory's absolute path.
    public let path: String

    /// Creates the directory.
    /// - Throws: the file system's error when it cannot be created.
    public init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("keygate-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(
            atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// The directory as a file URL.
    public var url: URL { URL(fileURLWithPath: path, isDirectory: true) }

    /// Writes `contents` to the file `name` in the directory. - Returns: the file's path.
    public func file(_ name: String, contents: String) throws -> String {
        let file = path + "/" + name
        try contents.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
