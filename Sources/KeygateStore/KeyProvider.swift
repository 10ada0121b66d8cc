internal import CSodium
import Glibc
public import KeygateItems
public import KeygatePolicy

/// Supplies the 256-bit key that seals item values at rest.
///
/// Duties: return the same key every time for the same store; never print or log it;
/// fail with a ``KeygatePolicy/KeygateError`` (never a made-up key) when it cannot be had.
public protocol KeyProvider: Sendable {
    /// The key (32 bytes).
    func key() throws(KeygateError) -> SecretData
}

/// Keeps the key in a file of its own, outside the database: 32 random bytes, mode 0600,
/// created on first use. A stolen database alone then reveals only metadata; a process
/// running as the same user can read the key file (see the README's threat model).
public struct KeyFileProvider: KeyProvider {
    /// The key file's path.
    public let path: String

    /// Whether a missing key file may be created (false: a missing key is an error).
    public let createsMissingKey: Bool

    /// Whether the key file and its directory must belong to the effective user (``KeygateItems/FilePrivacy``);
    /// a key file readable by others is refused either way.
    public let privacy: FilePrivacy

    /// A provider for the key file at `path`; it creates the file when missing if `createsMissingKey`.
    public init(path: String, createsMissingKey: Bool = true, privacy: FilePrivacy = .ownerOnly) {
        self.path = path
        self.createsMissingKey = createsMissingKey
        self.privacy = privacy
    }

    /// Reads the key, creating the file with a fresh random key when it does not exist.
    /// - Throws: `errSecNotAvailable` when the file cannot be read or created, has the wrong
    ///   length, is not a regular file, is readable by other users, or (with
    ///   ``KeygateItems/FilePrivacy/ownerOnly``) it or its directory is not the effective user's own.
    public func key() throws(KeygateError) -> SecretData {
        try PrivateFile.checkDirectory(of: path, privacy: privacy, status: .notAvailable)
        for _ in 0..<50 {
            // Non-blocking and checked: a FIFO or device in its place is refused, never waited on.
            if let descriptor = try PrivateFile.open(path, flags: O_RDONLY, privacy: privacy, status: .notAvailable) {
                defer { close(descriptor) }
                var status = stat()
                guard fstat(descriptor, &status) == 0 else {
                    let code = errno
                    throw failure("cannot be inspected: \(String(cString: strerror(code)))", cause: .errno(code))
                }
                guard status.st_mode & 0o077 == 0 else {
                    throw failure(
                        "is readable by other users (mode \(String(status.st_mode & 0o777, radix: 8)); chmod 600 it)",
                        cause: .condition(.notPrivate))
                }
                if status.st_size < Int(Sodium.keyLength) {
                    // Another process is still writing it.
                    usleep(10_000)
                    continue
                }
                guard status.st_size == Int(Sodium.keyLength) else {
                    throw failure("is not a Keygate key file", cause: .condition(.malformedKey))
                }
                var got = 0
                var code: Int32 = 0
                let key = SecretData(keyCount: Sodium.keyLength) { buffer in
                    got = read(descriptor, buffer.baseAddress, buffer.count)
                    code = errno
                }
                guard got == Sodium.keyLength else {
                    throw failure(
                        "could not be read completely",
                        cause: got < 0 ? .errno(code) : .condition(.malformedKey))
                }
                return key
            }
            guard createsMissingKey else {
                throw failure(
                    "is missing, but the store already holds items or a key-check value sealed under it; restore it from a backup",
                    cause: .condition(.missingKey))
            }
            let created = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            if created < 0 {
                let code = errno
                if code == EEXIST { continue }
                throw failure("cannot be created: \(String(cString: strerror(code)))", cause: .errno(code))
            }
            defer { close(created) }
            let key = SecretData.random(count: Sodium.keyLength)
            let written = key.withUnsafeBytes { write(created, $0.baseAddress, $0.count) }
            let code = written < 0 ? errno : 0
            // The key and its directory entry: a store whose items outlive its key is lost.
            let synced =
                written == Sodium.keyLength && fsync(created) == 0 && PrivateFile.syncDirectory(of: path)
            guard synced else {
                let cause = KeygateError.Cause.errno(code != 0 ? code : errno)
                // Best effort: a half-written key must not be read as a key; another run would refuse it anyway.
                _ = unlink(path)
                throw failure("could not be written", cause: cause)
            }
            return key
        }
        throw failure("was not completed by the process creating it", cause: .condition(.malformedKey))
    }

    private func failure(_ problem: String, cause: KeygateError.Cause) -> KeygateError {
        KeygateError(.notAvailable, "the key file \(path) \(problem)", cause: cause)
    }
}

/// A fixed key, for tests and for hosts that keep the key elsewhere (a TPM, a secret service).
public struct StaticKeyProvider: KeyProvider {
    private let secret: SecretData

    /// A provider that always returns `key` (32 bytes).
    public init(key: SecretData) {
        precondition(key.count == Sodium.keyLength, "a Keygate key is 32 bytes")
        secret = key
    }

    /// The key.
    public func key() throws(KeygateError) -> SecretData { secret }
}
