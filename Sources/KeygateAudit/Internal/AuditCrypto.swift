internal import CNettle
internal import CSodium

/// The C calls the audit trail makes, with their C types kept inside this file: SHA-256 for the
/// chain from Nettle (which picks the processor's SHA instructions at run time, several times
/// faster per byte than libsodium's portable C: a trail is hashed line by line as it is written
/// and again, whole, by every `audit verify`), HMAC-SHA-256 for redaction and random genesis
/// values from libsodium.
///
/// KeygatePolicy keeps its own small pure-Swift SHA-256 for enrollment-set hashes: it has no
/// C dependency by design (the engine builds and is tested without libsodium), and those
/// inputs are a few template ids, hashed once per enrollment change.
package enum AuditCrypto {
    private static let initialized: Bool = sodium_init() >= 0

    /// Initialises libsodium once; traps if it cannot (no secure randomness: nothing is safe).
    private static func initialize() {
        precondition(initialized, "libsodium could not be initialised")
    }

    /// Random bytes.
    package static func random(_ count: Int) -> [UInt8] {
        initialize()
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) }
        return bytes
    }

    /// The SHA-256 of `bytes`, as 64 lowercase hexadecimal digits.
    package static func sha256Hex(_ bytes: UnsafeRawBufferPointer) -> String { sha256(bytes).hex }

    /// The SHA-256 of `bytes`, its 32 bytes kept inline, on the stack (no `String` made for its
    /// hex until one is asked for: ``SHA256Digest/hex``).
    package static func sha256(_ bytes: UnsafeRawBufferPointer) -> SHA256Digest {
        let input = bytes.bindMemory(to: UInt8.self)
        var context = sha256_ctx()
        nettle_sha256_init(&context)
        nettle_sha256_update(&context, input.count, input.baseAddress)
        var digest = SHA256Digest()
        withUnsafeMutableBytes(of: &digest.words) { out in
            nettle_sha256_digest(&context, Int(SHA256_DIGEST_SIZE), out.bindMemory(to: UInt8.self).baseAddress!)
        }
        return digest
    }

    /// The SHA-256 of `bytes` from libsodium, as 64 lowercase hexadecimal digits (a second,
    /// independent implementation to check `sha256Hex` against).
    package static func libsodiumSHA256Hex(_ bytes: [UInt8]) -> String {
        initialize()
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        precondition(crypto_hash_sha256(&digest, bytes, UInt64(bytes.count)) == 0, "crypto_hash_sha256 failed")
        return digest.hexString
    }

    /// Lowercase hexadecimal of `bytes`.
    package static func hexString(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            guard let base = out.baseAddress else { return 0 }
            writeHex(UnsafeRawBufferPointer(bytes), to: base)
            return bytes.count * 2
        }
    }

    /// Writes `bytes` as lowercase hexadecimal to `output`, which has room for two digits per
    /// byte: each digit computed (no table lookup, no bounds check per digit). Inlined, so a
    /// digest's fixed 32 bytes make a loop of known length (one per group-commit append: the
    /// bench's "group commit" rows).
    @inline(__always)
    static func writeHex(_ bytes: UnsafeRawBufferPointer, to output: UnsafeMutablePointer<UInt8>) {
        for index in 0..<bytes.count {
            let byte = bytes[index]
            output[2 &* index] = hexDigit(byte >> 4)
            output[2 &* index &+ 1] = hexDigit(byte & 0xf)
        }
    }

    /// The lowercase hexadecimal digit of `value` (0…15).
    @inline(__always)
    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") &+ value : UInt8(ascii: "a") &+ (value &- 10)
    }

    /// The SHA-256 of `bytes`, as 64 lowercase hexadecimal digits.
    package static func sha256Hex(_ bytes: some Collection<UInt8>) -> String {
        if let hex = bytes.withContiguousStorageIfAvailable({ sha256Hex(UnsafeRawBufferPointer($0)) }) { return hex }
        return Array(bytes).withUnsafeBytes { sha256Hex($0) }
    }

    /// HMAC-SHA-256 of `message` under `key` (any length), as lowercase hexadecimal.
    package static func hmacSHA256Hex(_ message: [UInt8], key: [UInt8]) -> String {
        initialize()
        var state = crypto_auth_hmacsha256_state()
        var mac = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_BYTES))
        let results = [
            crypto_auth_hmacsha256_init(&state, key, key.count),
            crypto_auth_hmacsha256_update(&state, message, UInt64(message.count)),
            crypto_auth_hmacsha256_final(&state, &mac),
        ]
        precondition(results.allSatisfy { $0 == 0 }, "crypto_auth_hmacsha256 failed")
        return mac.hexString
    }
}

extension Array where Element == UInt8 {
    /// Lowercase hexadecimal.
    package var hexString: String { withUnsafeBufferPointer { AuditCrypto.hexString($0) } }
}

/// A SHA-256 digest's 32 bytes, held inline: the chain's tip as a group-commit sink keeps it
/// between appends, its hex rendered straight into the next line.
package struct SHA256Digest: Equatable, Sendable {
    /// The bytes, in order.
    var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    package static func == (lhs: SHA256Digest, rhs: SHA256Digest) -> Bool {
        lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2
            && lhs.words.3 == rhs.words.3
    }

    /// The 64 lowercase hexadecimal digits (``AuditCrypto/sha256Hex(_:)-(UnsafeRawBufferPointer)``'s text).
    package var hex: String {
        withUnsafeBytes(of: words) { AuditCrypto.hexString($0.bindMemory(to: UInt8.self)) }
    }

    /// Writes the 64 lowercase hexadecimal digits to `output`, which has room for them.
    func writeHex(to output: UnsafeMutablePointer<UInt8>) {
        withUnsafeBytes(of: words) { AuditCrypto.writeHex($0, to: output) }
    }
}
