import FoundationEssentials
import Glibc
import KeygatePolicy
import KeygateStore

/// Standard input and output for secrets: read bounded into wiped memory, written whole.
enum StandardStreams {
    /// Standard input, whole, at most `limit` bytes (never more than `limit + 1` is read).
    /// - Parameter what: names the input in the refusal ("the value", "the credential").
    /// - Throws: `errSecParam` when there is more, `errSecIO` when it cannot be read.
    static func read(limit: Int, what: String) throws(KeygateError) -> SecretData {
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65536)
        defer {
            SecretData.wipe(&bytes)
            SecretData.wipe(&chunk)
        }
        while true {
            let got = Glibc.read(0, &chunk, min(chunk.count, limit + 1 - bytes.count))
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw KeygateError(.io, "cannot read standard input") }
            if got == 0 { break }
            bytes += chunk[0..<got]
            guard bytes.count <= limit else {
                throw KeygateError(
                    .param,
                    "\(what) on standard input is larger than the limit of \(Self.describe(limit)); nothing was stored")
            }
        }
        return SecretData(bytes: bytes)
    }

    /// `16 MiB` for whole mebibytes, else a byte count.
    static func describe(_ bytes: Int) -> String {
        bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : "\(bytes) bytes"
    }

    /// Writes `bytes` to standard output, whole.
    static func write(_ bytes: [UInt8]) throws(KeygateError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(1, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw KeygateError(.io, "cannot write standard output") }
            offset += written
        }
    }
}

/// What a credential helper reads: a description or a token fits many times over.
enum CredentialInput {
    /// The most a helper reads from standard input.
    static let limit = 64 * 1024

    /// Standard input, whole, at most ``limit`` bytes.
    static func read() throws(KeygateError) -> SecretData {
        try StandardStreams.read(limit: limit, what: "the credential")
    }

    /// Writes `bytes` to standard output, whole.
    static func write(_ bytes: [UInt8]) throws(KeygateError) { try StandardStreams.write(bytes) }
}
