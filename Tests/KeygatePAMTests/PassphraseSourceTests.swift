import Glibc
import KeygatePAM
import KeygatePolicy
import Testing

@Suite struct PassphraseSourceTests {
    static let prompt = PassphrasePrompt(
        text: "Password: ", echo: false, service: "keygate", factor: .passcode, reason: "Read")

    func pipe(writing text: [UInt8], close writeEnd: Bool = true) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        #expect(Glibc.pipe(&fds) == 0)
        _ = text.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
        if writeEnd { close(fds[1]) }
        return (fds[0], fds[1])
    }

    func text(_ passphrase: Passphrase?) -> String? {
        passphrase?.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    @Test func fileDescriptorSourceReadsOneLinePerPrompt() {
        let fds = pipe(writing: Array("s3cret\nsecond\r\n\nlast".utf8))
        defer { close(fds.read) }
        let source = FileDescriptorPassphraseSource(descriptor: fds.read, showMessage: { _ in })
        #expect(text(source.passphrase(for: Self.prompt)) == "s3cret")
        #expect(text(source.passphrase(for: Self.prompt)) == "second")
        #expect(text(source.passphrase(for: Self.prompt)) == "")
        #expect(text(source.passphrase(for: Self.prompt)) == "last")
        #expect(source.passphrase(for: Self.prompt) == nil, "end of file cancels")
    }

    @Test func fileDescriptorSourceMissingPassphraseCancels() {
        let fds = pipe(writing: [])
        defer { close(fds.read) }
        #expect(FileDescriptorPassphraseSource(descriptor: fds.read).passphrase(for: Self.prompt) == nil)
        #expect(FileDescriptorPassphraseSource(descriptor: 987).passphrase(for: Self.prompt) == nil)
    }

    @Test func longLinesAreCutAtPAMsMaximum() {
        let fds = pipe(writing: [UInt8](repeating: UInt8(ascii: "x"), count: 2000) + [10, UInt8(ascii: "y"), 10])
        defer { close(fds.read) }
        let source = FileDescriptorPassphraseSource(descriptor: fds.read)
        #expect(source.passphrase(for: Self.prompt)?.count == 512)
        #expect(text(source.passphrase(for: Self.prompt)) == "y", "the rest of the long line was consumed")
    }

    @Test func passphrasesNeverDescribeTheirBytes() {
        let passphrase = Passphrase("hunter2")
        #expect(passphrase.description == "<Passphrase: redacted>")
        #expect(!"\(passphrase)".contains("hunter2"))
        #expect(passphrase.count == 7)
    }

    @Test func programmaticSourceScriptsAnswers() {
        let source = ProgrammaticPassphraseSource(answers: ["a", nil])
        #expect(text(source.passphrase(for: Self.prompt)) == "a")
        #expect(source.passphrase(for: Self.prompt) == nil)
        #expect(source.passphrase(for: Self.prompt) == nil)
        #expect(source.prompts.count == 3)
    }

    @Test func terminalSourceNeedsATerminal() {
        #expect(TerminalPassphraseSource.open(path: "/dev/null") == nil)
        #expect(TerminalPassphraseSource.open(path: "/nonexistent/tty") == nil)
    }
}
