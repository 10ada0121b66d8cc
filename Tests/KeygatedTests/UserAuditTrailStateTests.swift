import Foundation
import Glibc
import Keygate
import KeygateStore
import KeygateTesting
import Synchronization
import Testing

@testable import keygated

/// The daemon's trail takes "the file as I left it" from the sink's `fstat` under its `flock`
/// (``JSONLinesAuditSink/lastWritten``), not from a look at the path once the lock is released
/// (issue 15): a record another writer (root's `keygate --embedded` on the state directory)
/// slips in between is not taken for the trail's own, so the next append verifies the whole
/// trail first.
@Suite struct UserAuditTrailStateTests {
    /// What runs once right after the trail's next append (the window between the sink's
    /// unlock and the trail's look at the file), set by the test.
    final class SlipIn: Sendable {
        private let action = Mutex<(@Sendable () -> Void)?>(nil)
        func arm(_ body: @escaping @Sendable () -> Void) { action.withLock { $0 = body } }
        func run() {
            action.withLock { action in
                defer { action = nil }
                action?()
            }
        }
    }

    static func event(_ account: String) -> AuditEvent {
        AuditEvent(kind: .read, item: ItemIdentity(accessGroup: "g", account: account, service: "s"), decision: .allow)
    }

    static func world() throws -> (TemporaryDirectory, SQLiteItemStore, UserAuditTrail, SlipIn) {
        let directory = try TemporaryDirectory()
        let store = try SQLiteItemStore(path: directory.path + "/items.db")
        let slipIn = SlipIn()
        let trail = UserAuditTrail(
            uid: 4242, directory: directory.path, anchors: store, maximumFrameLength: 1 << 20,
            afterAppend: { slipIn.run() })
        return (directory, store, trail, slipIn)
    }

    /// Rewrites `old` as `new` (the same length) in the trail's first line, in place.
    static func edit(_ path: String, _ old: String, _ new: String) {
        let descriptor = open(path, O_RDWR)
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = read(descriptor, &bytes, bytes.count)
        let text = String(decoding: bytes[0..<max(count, 0)], as: UTF8.self)
        let firstLine = text.prefix { $0 != "\n" }
        guard let range = firstLine.range(of: old) else { return }
        let offset = firstLine.utf8.distance(from: firstLine.startIndex, to: range.lowerBound)
        _ = pwrite(descriptor, Array(new.utf8), new.utf8.count, off_t(offset))
    }

    /// Another writer edits the first record in place and appends a record of its own that
    /// chains from the trail's end, between the trail's append and its look at the file. The
    /// trail's next append finds the file not as it left it, verifies the whole trail and
    /// refuses: the edit is caught. (Before, the look at the path took the other writer's
    /// state for the trail's own: no verification, the edit went unnoticed and the append
    /// succeeded.)
    @Test func anEditSlippedInAfterAnAppendIsCaughtByTheNextOne() throws {
        let (directory, store, trail, slipIn) = try Self.world()
        _ = directory
        let now = SystemClock().now()
        try trail.append(Self.event("first"), at: now)
        slipIn.arm {
            Self.edit(trail.path, "\"first\"", "\"fir5t\"")
            let other = JSONLinesAuditSink(path: trail.path, durability: .eachRecord, anchors: store)
            _ = try? other.append(Self.event("other"), at: now)
        }
        try trail.append(Self.event("second"), at: now)
        let lines = try String(contentsOfFile: trail.path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 3, "the other writer's record was appended: \(lines)")
        #expect(lines.first?.contains("fir5t") == true)
        #expect(throws: KeygateError.self) { try trail.append(Self.event("third"), at: now) }
        let verdict = try trail.verify()
        #expect(verdict.records == 0)
        #expect(verdict.problem?.contains("sequence 1") == true, "\(verdict)")
    }

    /// A record another writer appends in that window, without editing anything, is verified
    /// with the rest and the trail goes on: nothing is refused that is intact.
    @Test func anIntactRecordSlippedInIsVerifiedAndTheTrailGoesOn() throws {
        let (directory, store, trail, slipIn) = try Self.world()
        _ = directory
        let now = SystemClock().now()
        try trail.append(Self.event("first"), at: now)
        slipIn.arm {
            let other = JSONLinesAuditSink(path: trail.path, durability: .eachRecord, anchors: store)
            _ = try? other.append(Self.event("other"), at: now)
        }
        try trail.append(Self.event("second"), at: now)
        try trail.append(Self.event("third"), at: now)
        let verdict = try trail.verify()
        #expect(verdict.problem == nil)
        #expect(verdict.records == 4)
    }
}
