import Foundation
import KeygateItems
import KeygateKeys
import KeygatePolicy
import Testing

/// The software keeper's keys, checked by the real OpenSSL and OpenSSH tools where they can be.
@Suite struct SoftwareKeyKeeperTests {
    let keeper = SoftwareKeyKeeper()

    /// Runs `program` with `arguments`; its status and output.
    static func run(_ program: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "keygate-keys-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Spec 9.9.1, 9.9.3, 9.9.5: a P-256 key signs the SHA-256 of a message in DER, which
    /// `openssl dgst -verify` accepts with the PEM public key; the public key is the 65-byte point.
    @Test func aP256SignatureVerifiesWithOpenSSL() throws {
        let key = try keeper.generate(.p256)
        #expect(key.publicKey.bytes.count == 65 && key.publicKey.bytes[0] == 4)
        #expect(key.publicKey.applicationLabel.count == 20)
        let message = Array("the message to sign".utf8)
        let signature = try keeper.sign(
            message, algorithm: .ecdsaSignatureMessageX962SHA256, with: key.blob, type: .p256)
        #expect(signature.count <= 72)
        #expect(key.publicKey.isValidSignature(signature, for: message, algorithm: .ecdsaSignatureMessageX962SHA256))
        #expect(
            !key.publicKey.isValidSignature(signature, for: message + [0], algorithm: .ecdsaSignatureMessageX962SHA256))
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.writeForOpenSSL(directory, key.publicKey, message, signature)
        let verified = try Self.run(
            "/usr/bin/openssl",
            [
                "dgst", "-sha256", "-verify", directory + "/pub.pem", "-signature", directory + "/sig",
                directory + "/msg",
            ])
        #expect(verified.status == 0 && verified.output.contains("Verified OK"), "\(verified.output)")
        // The digest algorithm over the same digest gives a signature of the same message.
        let digest = try keeper.sign(
            Self.sha256(message), algorithm: .ecdsaSignatureDigestX962SHA256, with: key.blob, type: .p256)
        #expect(key.publicKey.isValidSignature(digest, for: message, algorithm: .ecdsaSignatureMessageX962SHA256))
    }

    /// Writes `key`'s PEM, `message` and `signature` into `directory` as pub.pem, msg and sig.
    static func writeForOpenSSL(_ directory: String, _ key: PublicKey, _ message: [UInt8], _ signature: [UInt8]) throws
    {
        try key.pem.write(toFile: directory + "/pub.pem", atomically: true, encoding: .utf8)
        try Data(message).write(to: URL(fileURLWithPath: directory + "/msg"))
        try Data(signature).write(to: URL(fileURLWithPath: directory + "/sig"))
    }

    static func sha256(_ bytes: [UInt8]) throws -> [UInt8] {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data(bytes).write(to: URL(fileURLWithPath: directory + "/in"))
        let hex = try run("/usr/bin/openssl", ["dgst", "-sha256", "-r", directory + "/in"]).output
        return Hex.bytes(String(hex.prefix(64)))!
    }

    /// Spec 9.8.2: the digest algorithm refuses input that is not 32 bytes (errSecParam, "bad
    /// digest size"); an algorithm of another key type is errSecParam.
    @Test func aBadDigestSizeAndAForeignAlgorithmAreParam() throws {
        let key = try keeper.generate(.p256)
        #expect(throws: KeygateError.self) {
            try keeper.sign([1, 2, 3], algorithm: .ecdsaSignatureDigestX962SHA256, with: key.blob, type: .p256)
        }
        do {
            _ = try keeper.sign([1, 2, 3], algorithm: .ed25519, with: key.blob, type: .p256)
            Issue.record("an Ed25519 signature from a P-256 key")
        } catch {
            #expect(error.status == .param && error.message.contains("algorithm not supported by the key"))
        }
    }

    /// Ed25519 (the Linux extension) signs raw; `openssl pkeyutl -verify -rawin` accepts it.
    @Test func anEd25519SignatureVerifiesWithOpenSSL() throws {
        let key = try keeper.generate(.ed25519)
        #expect(key.publicKey.bytes.count == 32)
        let message = Array("sign me".utf8)
        let signature = try keeper.sign(message, algorithm: .ed25519, with: key.blob, type: .ed25519)
        #expect(signature.count == 64)
        #expect(key.publicKey.isValidSignature(signature, for: message, algorithm: .ed25519))
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.writeForOpenSSL(directory, key.publicKey, message, signature)
        let verified = try Self.run(
            "/usr/bin/openssl",
            [
                "pkeyutl", "-verify", "-pubin", "-inkey", directory + "/pub.pem", "-rawin", "-in", directory + "/msg",
                "-sigfile", directory + "/sig",
            ])
        #expect(
            verified.status == 0 && verified.output.contains("Signature Verified Successfully"), "\(verified.output)")
    }

    /// The OpenSSH forms are what `ssh-keygen` reads: it prints the fingerprint and the comment.
    @Test(arguments: KeyType.allCases) func theOpenSSHFormIsReadBySSHKeygen(type: KeyType) throws {
        let key = try keeper.generate(type)
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try (key.publicKey.openSSH(comment: "my key\nsecond line") + "\n").write(
            toFile: directory + "/key.pub", atomically: true, encoding: .utf8)
        let listed = try Self.run("/usr/bin/ssh-keygen", ["-l", "-f", directory + "/key.pub"])
        #expect(listed.status == 0, "\(listed.output)")
        #expect(listed.output.contains("my key second line"), "\(listed.output)")
        #expect(listed.output.contains(type == .p256 ? "(ECDSA)" : "(ED25519)"), "\(listed.output)")
    }

    /// Spec 9.9.4: verification on the software public key, against an outside vector (RFC 6979
    /// A.2.5, P-256 with SHA-256, message "sample"): the keeper's verifier agrees with it, and a
    /// changed bit fails.
    @Test func anOutsideECDSAVectorVerifies() throws {
        let x = "60FED4BA255A9D31C961EB74C6356D68C049B8923B61FA6CE669622E60F29FB6"
        let y = "7903FE1008B8BC99A41AE9E95628BC64F2F1B20C2D7E9F5177A3C294D4462299"
        let r = "EFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716"
        let s = "F7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8"
        let key = try PublicKey(type: .p256, bytes: [4] + Hex.bytes(x)! + Hex.bytes(y)!)
        let signature = try ECDSASignature(rawRepresentation: Hex.bytes(r)! + Hex.bytes(s)!)
        let message = Array("sample".utf8)
        #expect(
            key.isValidSignature(signature.derRepresentation, for: message, algorithm: .ecdsaSignatureMessageX962SHA256)
        )
        #expect(try ECDSASignature(der: signature.derRepresentation) == signature)
        var changed = signature.rawRepresentation
        changed[63] ^= 1
        let bad = try ECDSASignature(rawRepresentation: changed)
        #expect(!key.isValidSignature(bad.derRepresentation, for: message, algorithm: .ecdsaSignatureMessageX962SHA256))
    }

    /// A point off the curve, a compressed point and a short key are refused with errSecParam;
    /// a blob of another type or no blob of this keeper's is errSecDecode, and no error shows
    /// key bytes.
    @Test func badKeysAndBlobsAreRefused() throws {
        var point = try keeper.generate(.p256).publicKey.bytes
        point[64] ^= 1
        #expect(throws: KeygateError.self) { try PublicKey(type: .p256, bytes: point) }
        #expect(throws: KeygateError.self) { try PublicKey(type: .p256, bytes: [2] + point[1..<33]) }
        #expect(throws: KeygateError.self) { try PublicKey(type: .ed25519, bytes: [1, 2, 3]) }
        let ed = try keeper.generate(.ed25519)
        do {
            _ = try keeper.sign([1], algorithm: .ecdsaSignatureMessageX962SHA256, with: ed.blob, type: .p256)
            Issue.record("signed with a blob of another type")
        } catch {
            #expect(error.status == .decode)
            let material = ed.blob.copyBytes().dropFirst(5)
            #expect(!error.description.contains(Hex.string(material)))
        }
        #expect(throws: KeygateError.self) {
            try keeper.sign([1], algorithm: .ed25519, with: SecretData(bytes: [1, 2, 3, 4, 5, 6]), type: .ed25519)
        }
        #expect(!ed.blob.description.contains(Hex.string(ed.blob.copyBytes())))
    }

    /// ECDH (spec 9.9.6): both sides get the same 32 bytes.
    @Test func twoP256KeysAgreeOnOneSecret() throws {
        let one = try keeper.generate(.p256)
        let other = try keeper.generate(.p256)
        let first = try keeper.sharedSecret(with: other.publicKey, using: one.blob, type: .p256)
        let second = try keeper.sharedSecret(with: one.publicKey, using: other.blob, type: .p256)
        #expect(first.count == 32 && first == second)
    }
}
