import Foundation
import Glibc
import KeygatePAM
import Synchronization
import Testing

/// `TerminalPassphraseSource.readHiddenLine`, the hidden prompt `keygate add` and `update`
/// use for a value typed by hand, on a real pseudo-terminal.
@Suite struct TerminalHiddenLineTests {
    /// A pseudo-terminal: the source opens its terminal side by path; the test types on the
    /// other side and reads what the terminal shows.
    final class PseudoTerminal {
        let master: Int32
        let path: String

        // libc's pseudo-terminal calls, which the Glibc module does not import (they sit behind
        // _XOPEN_SOURCE in stdlib.h).
        typealias OpenPT = @convention(c) (Int32) -> Int32
        typealias PTOperation = @convention(c) (Int32) -> Int32
        typealias PTSName = @convention(c) (Int32, UnsafeMutablePointer<CChar>?, Int) -> Int32

        static func libc<T>(_ name: String, as type: T.Type) throws -> T {
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { throw POSIXError(.ENOSYS) }
            return unsafeBitCast(symbol, to: type)
        }

        init() throws {
            master = try Self.libc("posix_openpt", as: OpenPT.self)(O_RDWR | O_NOCTTY | O_CLOEXEC)
            guard master >= 0 else { throw POSIXError(.ENXIO) }
            var name = [CChar](repeating: 0, count: 128)
            guard try Self.libc("grantpt", as: PTOperation.self)(master) == 0,
                try Self.libc("unlockpt", as: PTOperation.self)(master) == 0,
                try Self.libc("ptsname_r", as: PTSName.self)(master, &name, name.count) == 0
            else {
                close(master)
                throw POSIXError(.ENXIO)
            }
            path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }

        deinit { close(master) }

        func type(_ bytes: [UInt8]) {
            _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
        }

        /// What the terminal shows until `text` appears (5 seconds at most).
        func read(until text: String) -> String {
            var shown = [UInt8]()
            let deadline = Date().addingTimeInterval(5)
            while Date() < deadline, !String(decoding: shown, as: UTF8.self).contains(text) {
                var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
                guard poll(&descriptor, 1, 100) > 0 else { continue }
                var buffer = [UInt8](repeating: 0, count: 256)
                let got = Glibc.read(master, &buffer, buffer.count)
                if got > 0 { shown += buffer[0..<got] }
            }
            return String(decoding: shown, as: UTF8.self)
        }
    }

    final class Outcome: Sendable {
        let value = Mutex<TerminalPassphraseSource.HiddenLine?>(nil)
    }

    /// Asks on a fresh terminal, types `typed` once the prompt shows, and returns the outcome,
    /// what the terminal showed, and whether echo and line editing were back on afterwards.
    static func ask(_ typed: [UInt8], maximumLength: Int = 64) throws -> (
        outcome: TerminalPassphraseSource.HiddenLine?, shown: String, restored: Bool
    ) {
        let terminal = try PseudoTerminal()
        let source = try #require(TerminalPassphraseSource.open(path: terminal.path))
        let outcome = Outcome()
        let reader = Thread {
            let line = source.readHiddenLine(prompt: "Value: ", maximumLength: maximumLength)
            outcome.value.withLock { $0 = line }
        }
        reader.start()
        var shown = terminal.read(until: "Value: ")
        terminal.type(typed)
        let deadline = Date().addingTimeInterval(5)
        while !reader.isFinished, Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        shown += terminal.read(until: "\n")
        let slave = open(terminal.path, O_RDWR | O_NOCTTY)
        defer { close(slave) }
        var settings = termios()
        tcgetattr(slave, &settings)
        let restored = settings.c_lflag & tcflag_t(ECHO | ICANON | ISIG) == tcflag_t(ECHO | ICANON | ISIG)
        return (outcome.value.withLock { $0 }, shown, restored)
    }

    static func text(_ outcome: TerminalPassphraseSource.HiddenLine?) -> String? {
        guard case .line(let line) = outcome else { return nil }
        return line.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    @Test func theLineTypedWithoutItsNewlineNeverEchoed() throws {
        let result = try Self.ask(Array("hunter2\n".utf8))
        #expect(Self.text(result.outcome) == "hunter2")
        #expect(result.shown.hasPrefix("Value: "))
        #expect(!result.shown.contains("hunter2"), "echo was off")
        #expect(result.restored)
    }

    @Test func backspaceAndCtrlUEdit() throws {
        #expect(Self.text(try Self.ask(Array("abx\u{7f}c\n".utf8)).outcome) == "abc")
        #expect(Self.text(try Self.ask(Array("wrong\u{15}right\r".utf8)).outcome) == "right")
    }

    @Test(arguments: [[0x03], [0x04], Array("abc".utf8) + [0x03]] as [[UInt8]])
    func ctrlCOrCtrlDCancels(typed: [UInt8]) throws {
        let result = try Self.ask(typed)
        guard case .cancelled = result.outcome else {
            Issue.record("expected cancelled, got \(String(describing: result.outcome))")
            return
        }
        #expect(result.restored)
    }

    /// A line longer than the maximum is refused whole, never cut to a shorter value.
    @Test func aLineLongerThanTheMaximumIsTooLong() throws {
        let result = try Self.ask(Array("abcdefgh\n".utf8), maximumLength: 4)
        guard case .tooLong = result.outcome else {
            Issue.record("expected tooLong, got \(String(describing: result.outcome))")
            return
        }
        #expect(Self.text(try Self.ask(Array("abcd\n".utf8), maximumLength: 4).outcome) == "abcd")
    }
}
