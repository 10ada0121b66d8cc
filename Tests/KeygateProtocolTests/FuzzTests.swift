import KeygateProtocol
import KeygateTesting
import Testing

/// Deterministic fuzzing: seeded random frames, truncations and bit flips of valid frames.
/// Every input ends in frames that decode, or in a typed ``ProtocolError``; never a crash,
/// and the decoder never holds more than the limit.
@Suite struct FuzzTests {
    static let limit = 4096

    /// Feeds `bytes` in random chunk sizes; returns how many frames decoded and whether a typed
    /// error ended the stream.
    static func feed(_ bytes: [UInt8], _ random: inout SeededRandom) -> (messages: Int, rejected: Bool) {
        var decoder = FrameDecoder(maximumLength: limit)
        var messages = 0
        var index = 0
        do {
            while index < bytes.count {
                let size = Int.random(in: 1...64, using: &random)
                let end = min(bytes.count, index + size)
                for frame in try decoder.append(bytes[index..<end]) {
                    _ = try Message(frame)
                    messages += 1
                }
                #expect(decoder.bufferedCount <= limit + FrameLimits.lengthFieldSize)
                index = end
            }
            try decoder.finish()
            return (messages, false)
        } catch {
            return (messages, true)
        }
    }

    @Test func randomBytesAreRejectedOrDecodedNeverCrash() {
        var random = SeededRandom(seed: 0x5EED_0001)
        var rejected = 0
        for _ in 0..<3000 {
            let count = Int.random(in: 0...200, using: &random)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            if Self.feed(bytes, &random).rejected { rejected += 1 }
        }
        // Random bytes almost never form a valid frame: most must be rejected.
        #expect(rejected > 2500)
    }

    @Test func randomFramesWithValidHeadersAndRandomPayloads() {
        var random = SeededRandom(seed: 0x5EED_0002)
        var outcomes = (decoded: 0, rejected: 0)
        for _ in 0..<5000 {
            let type = MessageType.allCases.randomElement(using: &random)!
            let payload = (0..<Int.random(in: 0...64, using: &random)).map { _ in
                UInt8.random(in: 0...3, using: &random)
            }
            let bytes = try! Frame(type: type, requestID: 1, payload: payload).encoded()
            if Self.feed(bytes, &random).rejected { outcomes.rejected += 1 } else { outcomes.decoded += 1 }
        }
        // Small byte values make many payloads decode; both outcomes must occur.
        #expect(outcomes.decoded > 0)
        #expect(outcomes.rejected > 0)
    }

    @Test func truncationsOfValidFramesAreAlwaysTruncatedErrors() throws {
        var random = SeededRandom(seed: 0x5EED_0003)
        for message in MessageRoundTripTests.samples {
            let bytes = try message.frame(requestID: 9).encoded()
            for cut in 1..<bytes.count {
                var decoder = FrameDecoder(maximumLength: Self.limit)
                let frames = try decoder.append(bytes[0..<cut])
                #expect(frames.isEmpty)
                #expect(throws: ProtocolError.truncated(buffered: cut)) { try decoder.finish() }
            }
            _ = Self.feed(bytes, &random)
        }
    }

    @Test func bitFlipsOfValidFramesAreRejectedOrDecodeCleanly() throws {
        var random = SeededRandom(seed: 0x5EED_0004)
        var rejected = 0
        var total = 0
        for message in MessageRoundTripTests.samples {
            let original = try message.frame(requestID: 9).encoded()
            for _ in 0..<200 {
                var bytes = original
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let index = Int.random(in: 0..<bytes.count, using: &random)
                    bytes[index] ^= UInt8(1) << UInt8.random(in: 0...7, using: &random)
                }
                total += 1
                if Self.feed(bytes, &random).rejected { rejected += 1 }
            }
        }
        #expect(rejected > total / 4)
    }
}
