import KeygateItems

/// Splits a byte stream into frames, incrementally, never holding more than one frame of at
/// most `maximumLength` bytes plus its length field.
///
/// Feed it whatever a read returned with ``append(_:)``; each complete frame comes back from
/// that call. The header is checked as soon as it has arrived (length within limits,
/// version, reserved bits, type), before any payload byte is stored, so an oversized frame
/// costs 12 bytes of memory. After the first error the decoder refuses everything: the
/// connection is to be closed. Buffers that held a frame are zeroed once the frame is handed
/// over or abandoned (payloads can hold secrets).
public struct FrameDecoder: Sendable {
    /// The largest length field accepted.
    public let maximumLength: Int
    private var header: [UInt8] = []
    private var pending: (type: MessageType, requestID: UInt32, length: Int)?
    private var body: [UInt8] = []
    private var failure: ProtocolError?

    /// A decoder refusing frames longer than `maximumLength` (clamped to
    /// ``FrameLimits/hardMaximumLength``).
    public init(maximumLength: Int = FrameLimits.defaultMaximumLength) {
        self.maximumLength = min(max(maximumLength, FrameLimits.headerSize), FrameLimits.hardMaximumLength)
    }

    /// Bytes of an unfinished frame held now.
    public var bufferedCount: Int { header.count + body.count }

    /// Consumes `bytes`; returns the frames they complete, in order.
    /// - Throws: the first ``ProtocolError``; the decoder then refuses all further input.
    public mutating func append(_ bytes: some Collection<UInt8>) throws(ProtocolError) -> [Frame] {
        if let failure { throw failure }
        var frames: [Frame] = []
        var index = bytes.startIndex
        while index != bytes.endIndex {
            if let current = pending {
                let wanted = current.length - FrameLimits.headerSize - body.count
                let end = bytes.index(index, offsetBy: wanted, limitedBy: bytes.endIndex) ?? bytes.endIndex
                body.append(contentsOf: bytes[index..<end])
                index = end
            } else {
                header.append(bytes[index])
                index = bytes.index(after: index)
                if header.count == FrameLimits.lengthFieldSize + FrameLimits.headerSize {
                    do {
                        pending = try parseHeader()
                    } catch {
                        fail(error)
                        throw error
                    }
                    body.reserveCapacity(pending!.length - FrameLimits.headerSize)
                } else if header.count == FrameLimits.lengthFieldSize {
                    let length = Self.length(header)
                    if length > maximumLength || length < FrameLimits.headerSize {
                        let error: ProtocolError =
                            length > maximumLength
                            ? .oversized(length: length, limit: maximumLength) : .undersized(length: length)
                        fail(error)
                        throw error
                    }
                }
            }
            if let current = pending, body.count == current.length - FrameLimits.headerSize {
                // Moved, not copied: the frame's owner wipes it (``Frame/wipe()``).
                frames.append(Frame(type: current.type, requestID: current.requestID, payload: body))
                body = []
                header = []
                pending = nil
            }
        }
        return frames
    }

    /// Says the stream ended.
    /// - Throws: ``ProtocolError/truncated(buffered:)`` when it ended inside a frame.
    public mutating func finish() throws(ProtocolError) {
        if let failure { throw failure }
        guard bufferedCount == 0 else {
            let error = ProtocolError.truncated(buffered: bufferedCount)
            fail(error)
            throw error
        }
    }

    private mutating func fail(_ error: ProtocolError) {
        failure = error
        SecretData.wipe(&body)
        body = []
        header = []
        pending = nil
    }

    private static func length(_ bytes: [UInt8]) -> Int {
        Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
    }

    private func parseHeader() throws(ProtocolError) -> (type: MessageType, requestID: UInt32, length: Int) {
        let length = Self.length(header)
        guard header[4] == FrameLimits.version else { throw .unsupportedVersion(header[4]) }
        guard let type = MessageType(rawValue: header[5]) else { throw .unknownMessageType(header[5]) }
        guard header[6] == 0, header[7] == 0 else { throw .reservedBitsSet }
        let requestID = UInt32(header[8]) << 24 | UInt32(header[9]) << 16 | UInt32(header[10]) << 8 | UInt32(header[11])
        return (type, requestID, length)
    }
}

extension Frame {
    /// The frame's bytes on the wire: length field, header, payload.
    /// - Throws: ``ProtocolError/oversized(length:limit:)`` when it would exceed `maximumLength`.
    public func encoded(maximumLength: Int = FrameLimits.defaultMaximumLength) throws(ProtocolError) -> [UInt8] {
        let length = FrameLimits.headerSize + payload.count
        guard length <= min(maximumLength, FrameLimits.hardMaximumLength) else {
            throw .oversized(length: length, limit: maximumLength)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(FrameLimits.lengthFieldSize + length)
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: length >> shift)) }
        bytes.append(FrameLimits.version)
        bytes.append(type.rawValue)
        bytes.append(0)
        bytes.append(0)
        for shift in stride(from: 24, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: requestID >> shift))
        }
        bytes.append(contentsOf: payload)
        return bytes
    }
}
