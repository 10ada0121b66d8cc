import Testing

@testable import KeygatePolicy

@Suite struct EnrollmentSetHashTests {
    @Test func sha256KnownAnswers() {
        // FIPS 180-4 examples.
        func hex(_ text: String) -> String { EnrollmentSetHash(bytes: SHA256.hash(Array(text.utf8)))!.hex }
        #expect(hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            EnrollmentSetHash(bytes: SHA256.hash([UInt8](repeating: 0x61, count: 1_000_000)))!.hex
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func setSemantics() throws {
        let a = try #require(EnrollmentSetHash(templateIDs: ["f1", "f2"]))
        #expect(EnrollmentSetHash(templateIDs: ["f2", "f1", "f1"]) == a)
        #expect(EnrollmentSetHash(templateIDs: ["f1"]) != a)
        #expect(EnrollmentSetHash(templateIDs: ["f1f2"]) != a)
        #expect(EnrollmentSetHash(templateIDs: ["f1", "f2"], salt: "other-app") != a)
        #expect(EnrollmentSetHash(templateIDs: []) == nil)
        #expect(EnrollmentSetHash(hex: a.hex) == a)
        #expect(EnrollmentSetHash(hex: "xyz") == nil)
        #expect(a.bytes.count == 32)
        #expect(a.shortHex.count == 9)
    }
}
