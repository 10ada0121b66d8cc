import Foundation
import KeygatePolicy
import KeygateStore

/// Reads a credential helper's standard input: bounded, into wiped memory.
enum CredentialInput {
    /// The most a helper reads from standard input (a description and a token fit many times over).
    static let limit = 64 * 1024

    /// Standard input, whole, at most ``limit`` bytes.
    /// - Throws: `errSecParam` when there is more, `errSecIO` when it cannot be read.
    static func read() throws(KeygateError) -> SecretData {
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        defer {
            SecretData.wipe(&bytes)
            SecretData.wipe(&chunk)
        }
        while true {
            let got = Glibc.read(0, &chunk, chunk.count)
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw KeygateError(.io, "cannot read standard input") }
            if got == 0 { break }
            guard bytes.count + got <= limit else {
                throw KeygateError(.param, "the credential on standard input is longer than \(limit) bytes")
            }
            bytes += chunk[0..<got]
        }
        return SecretData(bytes: bytes)
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
