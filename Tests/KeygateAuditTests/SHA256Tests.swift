import KeygatePolicy
import Testing

@testable import KeygateAudit

/// Issue 10 point 1: the chain's SHA-256 (Nettle's, on the processor's SHA instructions where it
/// has them) must give exactly the standard digest, and libsodium's, or every trail would break.
@Suite struct SHA256Tests {
    /// FIPS 180-4's examples: the empty message, "abc", and the two-block 448-bit message.
    @Test func givesTheStandardDigests() {
        #expect(
            AuditCrypto.sha256Hex(Array("".utf8))
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            AuditCrypto.sha256Hex(Array("abc".utf8))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            AuditCrypto.sha256Hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    /// Every length from 0 to 300 bytes (each padding case: a partial block, exactly 55, 56 and
    /// 64 bytes, several blocks) and a few long inputs give libsodium's digest.
    @Test func agreesWithLibsodiumAtEveryLength() {
        var random = SystemRandomNumberGenerator()
        for length in Array(0...300) + [1_000, 4_095, 4_096, 65_537] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            #expect(AuditCrypto.sha256Hex(bytes) == AuditCrypto.libsodiumSHA256Hex(bytes), "length \(length)")
        }
    }
}
