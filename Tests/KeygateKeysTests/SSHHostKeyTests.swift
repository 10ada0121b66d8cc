import Foundation
import KeygateKeys
import KeygatePolicy
import Testing

/// A server's host key checks its own signatures only (issue 31, session binding): RSA with
/// SHA-256 or SHA-512 and ECDSA on P-384, signed here by Python's `cryptography`; tampered
/// signatures, another signature type, SHA-1 RSA and malformed keys are refused.
@Suite struct SSHHostKeyTests {
    /// Signs `message` with a fresh RSA-3072 and P-384 key: n, e, the SHA-512 and SHA-256
    /// RSA signatures, the P-384 point and its signature's r and s, all in hex, one a line.
    static let signer = #"""
        import sys
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa, utils
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
        message = bytes.fromhex(sys.argv[1])
        key = rsa.generate_private_key(public_exponent=65537, key_size=3072)
        numbers = key.public_key().public_numbers()
        print(format(numbers.n, "x").rjust(768, "0"))
        print(format(numbers.e, "x").rjust(6, "0"))
        print(key.sign(message, padding.PKCS1v15(), hashes.SHA512()).hex())
        print(key.sign(message, padding.PKCS1v15(), hashes.SHA256()).hex())
        curve = ec.generate_private_key(ec.SECP384R1())
        print(curve.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint).hex())
        r, s = utils.decode_dss_signature(curve.sign(message, ec.ECDSA(hashes.SHA384())))
        print(format(r, "x").rjust(96, "0"))
        print(format(s, "x").rjust(96, "0"))
        """#

    struct Signed {
        let rsaKey: [UInt8]
        let sha512: [UInt8]
        let sha256: [UInt8]
        let ecdsaKey: [UInt8]
        let r: [UInt8]
        let s: [UInt8]
    }

    static let message = Array("the session identifier".utf8)

    static func signed() throws -> Signed {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", signer, message.map { String(format: "%02x", $0) }.joined()]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n").map { Self.bytes(String($0)) }
        try #require(process.terminationStatus == 0 && lines.count == 7, "python3 cryptography could not sign")
        var rsa = SSHWireWriter()
        rsa.string("ssh-rsa")
        rsa.mpint(lines[1])
        rsa.mpint(lines[0])
        var ecdsa = SSHWireWriter()
        ecdsa.string("ecdsa-sha2-nistp384")
        ecdsa.string("nistp384")
        ecdsa.bytes(lines[4])
        return Signed(
            rsaKey: rsa.output, sha512: lines[2], sha256: lines[3], ecdsaKey: ecdsa.output, r: lines[5], s: lines[6])
    }

    /// The bytes a hex string spells (two digits a byte).
    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count - 1, by: 2).map {
            UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16) ?? 0
        }
    }

    static func blob(_ type: String, _ body: [UInt8]) -> [UInt8] {
        var writer = SSHWireWriter()
        writer.string(type)
        writer.bytes(body)
        return writer.output
    }

    static func ecdsaBody(_ r: [UInt8], _ s: [UInt8]) -> [UInt8] {
        var inner = SSHWireWriter()
        inner.mpint(r)
        inner.mpint(s)
        return inner.output
    }

    @Test func rsaSignaturesWithSHA2VerifyAndTamperedOnesDoNot() throws {
        let signed = try Self.signed()
        let key = try SSHHostKey(openSSHBlob: signed.rsaKey)
        #expect(key.openSSHType == "ssh-rsa")
        #expect(try key.isValidSignature(Self.blob("rsa-sha2-512", signed.sha512), of: Self.message))
        #expect(try key.isValidSignature(Self.blob("rsa-sha2-256", signed.sha256), of: Self.message))
        #expect(try !key.isValidSignature(Self.blob("rsa-sha2-256", signed.sha512), of: Self.message))
        #expect(try !key.isValidSignature(Self.blob("rsa-sha2-512", signed.sha512), of: Self.message + [0]))
        var tampered = signed.sha512
        tampered[10] ^= 1
        #expect(try !key.isValidSignature(Self.blob("rsa-sha2-512", tampered), of: Self.message))
        #expect(try !key.isValidSignature(Self.blob("ssh-ed25519", [UInt8](repeating: 0, count: 64)), of: Self.message))
        #expect(throws: KeygateError.self) {
            try key.isValidSignature(Self.blob("ssh-rsa", signed.sha512), of: Self.message)
        }
    }

    @Test func ecdsaP384SignaturesVerifyAndTamperedOnesDoNot() throws {
        let signed = try Self.signed()
        let key = try SSHHostKey(openSSHBlob: signed.ecdsaKey)
        let good = Self.blob("ecdsa-sha2-nistp384", Self.ecdsaBody(signed.r, signed.s))
        #expect(try key.isValidSignature(good, of: Self.message))
        #expect(try !key.isValidSignature(good, of: Self.message + [0]))
        #expect(
            try !key.isValidSignature(
                Self.blob("ecdsa-sha2-nistp384", Self.ecdsaBody(signed.s, signed.r)), of: Self.message))
        #expect(
            try !key.isValidSignature(
                Self.blob("ecdsa-sha2-nistp256", Self.ecdsaBody(signed.r, signed.s)), of: Self.message))
    }

    @Test func malformedHostKeysAreRefusedNamingWhy() throws {
        func status(_ blob: [UInt8]) -> KeygateStatus? {
            do {
                _ = try SSHHostKey(openSSHBlob: blob)
                return nil
            } catch {
                return error.status
            }
        }
        var small = SSHWireWriter()
        small.string("ssh-rsa")
        small.mpint([1, 0, 1])
        small.mpint([0xc1] + [UInt8](repeating: 7, count: 63))
        #expect(status(small.output) == .param, "a 512-bit RSA key")
        var curve = SSHWireWriter()
        curve.string("ecdsa-sha2-nistp384")
        curve.string("nistp256")
        curve.bytes([4] + [UInt8](repeating: 1, count: 96))
        #expect(status(curve.output) == .param, "another curve")
        var point = SSHWireWriter()
        point.string("ecdsa-sha2-nistp521")
        point.string("nistp521")
        point.bytes([4] + [UInt8](repeating: 1, count: 96))
        #expect(status(point.output) == .param, "a point of another size")
        var certificate = SSHWireWriter()
        certificate.string("ssh-ed25519-cert-v01@openssh.com")
        #expect(status(certificate.output) == .unimplemented)
        #expect(status([0, 0, 0]) == .param, "cut short")
        let signed = try Self.signed()
        #expect(status(signed.rsaKey + [0]) == .param, "bytes after the key")
    }
}
