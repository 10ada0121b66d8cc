import Glibc
import KeygatePolicy
import KeygateStore

/// Where a command writes: standard output or standard error, or a buffer in a test.
protocol OutputTarget: Sendable {
    /// Writes all of `bytes`, straight from the caller's memory (a secret is never copied).
    /// - Throws: `errSecIO` when the stream refuses them.
    func write(_ bytes: UnsafeRawBufferPointer) throws(KeygateError)
    /// Whether the stream is a terminal (`get` then ends the value with a newline).
    var isTerminal: Bool { get }
}

extension OutputTarget {
    /// Writes all of `bytes` (text keygate made, never a secret: that is written from its
    /// wiped buffer).
    func write(_ bytes: [UInt8]) throws(KeygateError) {
        var failure: KeygateError?
        bytes.withUnsafeBytes { buffer in
            do throws(KeygateError) {
                try write(buffer)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }
}

/// Where a command reads a value or a credential: standard input, or bytes in a test.
protocol InputSource: Sendable {
    /// The input, whole, into wiped memory; at most `limit` bytes (never more than
    /// `limit + 1` is read).
    /// - Parameter what: names the input in the refusal ("the value", "the credential").
    /// - Throws: `errSecParam` when there is more, `errSecIO` when it cannot be read.
    func read(limit: Int, what: String) throws(KeygateError) -> SecretData
    /// Whether the input is a terminal (`add` and `update` then ask at a hidden prompt).
    var isTerminal: Bool { get }
}

extension InputSource {
    /// The refusal of an input larger than `limit` bytes.
    static func tooLarge(_ what: String, limit: Int) -> KeygateError {
        KeygateError(
            .param,
            "\(what) on standard input is larger than the limit of \(InputFile.describe(limit)); nothing was stored")
    }
}

/// A file descriptor of the process written with `write(2)`, whole.
struct DescriptorOutput: OutputTarget {
    /// The descriptor (1 for standard output, 2 for standard error).
    let descriptor: Int32

    func write(_ bytes: UnsafeRawBufferPointer) throws(KeygateError) {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                throw KeygateError(
                    .io, "cannot write \(descriptor == 1 ? "standard output" : "descriptor \(descriptor)")")
            }
            offset += written
        }
    }

    var isTerminal: Bool { isatty(descriptor) == 1 }
}

/// Standard input (descriptor 0), read with `read(2)` into wiped memory.
struct StandardInput: InputSource {
    func read(limit: Int, what: String) throws(KeygateError) -> SecretData {
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
            guard bytes.count <= limit else { throw Self.tooLarge(what, limit: limit) }
        }
        return SecretData(bytes: bytes)
    }

    var isTerminal: Bool { isatty(0) == 1 }
}
