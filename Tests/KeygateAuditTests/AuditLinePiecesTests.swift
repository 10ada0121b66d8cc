import Dispatch
import KeygatePolicy
import KeygateTesting
import Testing

@testable import KeygateAudit

/// Session 22 (wt-sink): a group-commit sink renders some pieces of its lines once and copies
/// them after (``AuditLinePieces``: the process's fields, the status, the evaluator's
/// reasons), and writes enum raw values from static text. The lines stay the bytes a record
/// sealed afresh renders, whatever changes from one event to the next.
@Suite struct AuditLinePiecesTests {
    @Test func rawValueTextIsTheRawValue() {
        for kind in AuditEvent.Kind.allCases { #expect(kind.text.description == kind.rawValue) }
        for verdict in AuditEvent.Verdict.allCases { #expect(verdict.text.description == verdict.rawValue) }
        for factor in Factor.allCases { #expect(factor.auditText.description == factor.rawValue) }
    }

    /// The digest kept as bytes gives the same hex as the hash made as text, for inputs
    /// around SHA-256's block and padding boundaries.
    @Test func digestBytesGiveTheHashText() {
        for length in [0, 1, 55, 56, 63, 64, 65, 119, 120, 521] {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            let digest = bytes.withUnsafeBytes { AuditCrypto.sha256($0) }
            let text = bytes.withUnsafeBytes { AuditCrypto.sha256Hex($0) }
            #expect(digest.hex == text, "\(length) bytes")
            var written = [UInt8](repeating: 0, count: 64)
            written.withUnsafeMutableBufferPointer { digest.writeHex(to: $0.baseAddress!) }
            #expect(String(decoding: written, as: UTF8.self) == text, "\(length) bytes")
        }
    }

    /// Decimal digits are written two at a time: every value up to 20,000, and each power of
    /// ten and its neighbours, read back as `String(value)` gives them.
    @Test func decimalDigitsInPairsAreTheDescription() {
        var values = Array(Int64(0)...20_000)
        var power: Int64 = 1
        for _ in 1...18 {
            power *= 10
            values += [power - 1, power, power + 1, -power]
        }
        for value in values {
            var bytes: [UInt8] = []
            bytes.appendDecimal(value)
            #expect(String(decoding: bytes, as: UTF8.self) == String(value), "\(value)")
        }
    }

    /// Events whose process, executable, status, kind, verdict and factor change in
    /// overlapping periods, so that every kept piece is both reused and replaced.
    private static func event(_ index: Int) -> AuditEvent {
        let kinds = AuditEvent.Kind.allCases
        let verdicts = AuditEvent.Verdict.allCases
        let statuses: [KeygateStatus?] = [nil, .success, .authFailed, .itemNotFound, KeygateStatus(rawValue: -1)]
        let executables: [String?] = ["/usr/bin/keygate", nil, "/opt/a \"b\"\\c", "/usr/bin/keygate"]
        return AuditEvent(
            kind: kinds[index % kinds.count],
            item: .init(accessGroup: "g", account: "a\(index)", service: "s"),
            accessControl: nil, ruleIDs: [], decision: verdicts[index % verdicts.count],
            status: statuses[index / 2 % statuses.count], notes: [],
            factors: [.init(factor: Factor.allCases[index % Factor.allCases.count], secondsAgo: index)],
            processID: Int32(40 + index / 3 % 2), userID: UInt32(1000 + index / 5 % 2),
            executable: executables[index / 4 % executables.count])
    }

    @Test func storedLinesFollowEveryChange() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/audit.jsonl"
        let sink = GroupCommitTestSinks.sink(path, records: 16, idle: .seconds(60))
        let count = 60
        for index in 0..<count {
            try sink.store(Self.event(index), at: Timestamp(seconds: Int64(500 + index)))
        }
        sink.flush()
        #expect(try AuditTrailFile.verify(at: path) == .intact(records: count))
        let lines = try AuditTrailFile.lines(at: path)
        let records = try AuditTrailFile.records(at: path)
        try #require(lines.count == count && records.count == count)
        var head = AuditHead(genesis: records[0].previousHash)
        for index in 0..<count {
            let expected = head.seal(Self.event(index), at: Timestamp(seconds: Int64(500 + index)))
            #expect(Array(lines[index].utf8) == Array(expected.line.utf8), "line \(index + 1)")
        }
    }
}
