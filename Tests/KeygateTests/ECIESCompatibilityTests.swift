import Foundation
import Keygate
import KeygateItems
import KeygateKeys
import KeygatePolicy
import KeygateTesting
import Testing

/// ECIES byte-compatible with Apple's layout (spec 9.9.8), checked against an independent
/// implementation: Python's `cryptography` builds the message from the spec's description
/// (ephemeral P-256 point ‖ AES-128-GCM ciphertext ‖ 16-byte tag; key ‖ IV from the X9.63 KDF
/// with SHA-256 over the ECDH secret, the ephemeral point as shared info; a 16-byte GCM IV),
/// and decrypts what Keygate builds.
@Suite struct ECIESCompatibilityTests {
    /// Runs `script` under python3 with `input` on standard input; its standard output.
    static func python(_ script: String, input: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script]
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let output = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errors = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw KeygateError(.internalError, "python3: \(errors)") }
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static let prelude = """
        import sys
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        from cryptography.hazmat.primitives.kdf.x963kdf import X963KDF
        def derive(z, point, variable):
            out = X963KDF(algorithm=hashes.SHA256(), length=32 if variable else 16, sharedinfo=point).derive(z)
            return out[:16], (out[16:32] if variable else bytes(16))

        """

    /// Apple's layout, encrypted by Python to the keeper's key, decrypts through the facade
    /// after the key's proof (`ock`), for the variable-IV and the legacy zero-IV forms.
    @Test(arguments: [ECIESAlgorithm.cofactorVariableIVX963SHA256AESGCM, .standardX963SHA256AESGCM])
    func amessageInApplesLayoutDecrypts(_ algorithm: ECIESAlgorithm) async throws {
        let fixture = try KeychainFixture(.sqlite)
        let control = try AccessControl(
            protection: .whenUnlockedThisDeviceOnly, flags: [.privateKeyUsage, .devicePasscode])
        let key = try await fixture.keychain.createKey(
            NewKeyRequest(type: .p256, label: "inbox", accessGroup: "group.app", protection: .accessControl(control)))
        let message = try Self.python(
            Self.prelude + """
                point, variable = bytes.fromhex(sys.stdin.readline().strip()), sys.stdin.readline().strip() == "1"
                recipient = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
                ephemeral = ec.generate_private_key(ec.SECP256R1())
                epoint = ephemeral.public_key().public_bytes(
                    encoding=__import__("cryptography.hazmat.primitives.serialization", fromlist=["x"]).Encoding.X962,
                    format=__import__("cryptography.hazmat.primitives.serialization", fromlist=["x"]).PublicFormat.UncompressedPoint)
                key, iv = derive(ephemeral.exchange(ec.ECDH(), recipient), epoint, variable)
                print((epoint + AESGCM(key).encrypt(iv, b"a secret for the keeper's key", None)).hex())
                """,
            input: Hex.string(key.publicKey) + "\n" + (algorithm.variableIV ? "1" : "0") + "\n")
        let bytes = try #require(Hex.bytes(message))
        let plaintext = try await fixture.keychain.decrypt(
            bytes, algorithm: algorithm, key: KeyQuery(label: "inbox", accessGroup: "group.app"))
        #expect(plaintext == SecretData("a secret for the keeper's key"))
        #expect(fixture.authenticator.prompts(for: .passcode).map(\.operation) == [.computeKey])
        var tampered = bytes
        tampered[tampered.count - 1] ^= 1
        await #expect(throws: KeygateError(.param, "")) {
            _ = try await fixture.keychain.decrypt(
                tampered, algorithm: algorithm, key: KeyQuery(label: "inbox", accessGroup: "group.app"))
        }
        await #expect(throws: KeygateError(.param, "")) {
            _ = try await fixture.keychain.decrypt(
                Array(bytes.prefix(80)), algorithm: algorithm, key: KeyQuery(label: "inbox", accessGroup: "group.app"))
        }
    }

    /// The reverse: Keygate's encryption to a Python key decrypts in Python.
    @Test func keygatesLayoutDecryptsInPython() throws {
        let generated = try Self.python(
            """
            from cryptography.hazmat.primitives.asymmetric import ec
            from cryptography.hazmat.primitives import serialization as s
            k = ec.generate_private_key(ec.SECP256R1())
            print(k.private_numbers().private_value.to_bytes(32, "big").hex())
            print(k.public_key().public_bytes(s.Encoding.X962, s.PublicFormat.UncompressedPoint).hex())
            """, input: "")
        let lines = generated.split(separator: "\n").map(String.init)
        let recipient = try PublicKey(type: .p256, bytes: try #require(Hex.bytes(lines[1])))
        let sealed = try ECIES.seal(
            SecretData("from Keygate"), to: recipient, algorithm: .cofactorVariableIVX963SHA256AESGCM)
        let opened = try Self.python(
            Self.prelude + """
                scalar, message = sys.stdin.readline().strip(), bytes.fromhex(sys.stdin.readline().strip())
                k = ec.derive_private_key(int(scalar, 16), ec.SECP256R1())
                point = message[:65]
                peer = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
                key, iv = derive(k.exchange(ec.ECDH(), peer), point, True)
                print(AESGCM(key).decrypt(iv, message[65:], None).decode())
                """,
            input: lines[0] + "\n" + Hex.string(sealed) + "\n")
        #expect(opened == "from Keygate")
    }
}
