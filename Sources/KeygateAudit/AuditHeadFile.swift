import Glibc
import KeygateItems
import KeygatePolicy

/// The head file beside a trail (`<trail>.head`): one JSON line, ``AuditHead/line``, padded
/// with spaces to a fixed width so that each new head is written in place over the last
/// (one `pwrite` of one disk sector, never a temporary file and a rename).
enum AuditHeadFile {
    /// What a head file holds.
    enum Contents {
        /// No head file, or an empty one (created, never written).
        case missing
        /// A head.
        case found(AuditHead)
        /// Something that is not a head.
        case damaged(String)
    }

    /// The width every head is padded to, newline included.
    static let width = 256

    /// Reads the head at `path` (a private regular file).
    static func read(_ path: String, privacy: FilePrivacy) throws(KeygateError) -> Contents {
        guard let descriptor = try PrivateFile.open(path, flags: O_RDONLY, privacy: privacy, status: .io) else {
            return .missing
        }
        defer { close(descriptor) }
        return try read(descriptor: descriptor, path: path)
    }

    /// Reads the head in the file open at `descriptor`.
    static func read(descriptor: Int32, path: String) throws(KeygateError) -> Contents {
        var bytes = [UInt8](repeating: 0, count: 4096)
        var got = 0
        repeat {
            got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        } while got < 0 && errno == EINTR
        guard got >= 0 else { throw KeygateError(.io, "cannot read \(path): \(String(cString: strerror(errno)))") }
        guard got > 0 else { return .missing }
        var text = bytes[..<got]
        while let last = text.last, last == 10 || last == 13 || last == 32 { text = text.dropLast() }
        if let head = plainHead(text) { return .found(head) }
        do {
            return .found(try AuditHead(line: String(decoding: text, as: UTF8.self), file: path))
        } catch {
            return .damaged("\(error)")
        }
    }

    /// `head`'s line, padded to ``width`` with spaces and ended by a newline.
    ///
    /// The writer's heads (hex genesis and hash) are laid out straight into the bytes, exactly
    /// as ``AuditHead/line`` renders them, since this runs on every append; any other head
    /// goes through the JSON renderer.
    static func bytes(of head: AuditHead) -> [UInt8] {
        if let bytes = plainBytes(of: head) { return bytes }
        var bytes = Array(head.line.utf8)
        if bytes.count < width - 1 { bytes += [UInt8](repeating: 32, count: width - 1 - bytes.count) }
        bytes.append(10)
        return bytes
    }

    /// The head in `text` when it is laid out exactly as ``plainBytes(of:)`` writes it (padding
    /// removed), read without the JSON parser, which would dominate opening the trail in a short
    /// process (the bench's "Whole process" rows); nil for any other text, which the parser reads. What it accepts the parser
    /// reads to the same head: letters and digits need no escaping, and the sequence number is
    /// plain decimal (no leading zero) that fits an `Int`.
    static func plainHead<Bytes: Collection<UInt8>>(_ text: Bytes) -> AuditHead? {
        var rest = text[...]
        func skip(_ literal: String) -> Bool {
            guard rest.starts(with: literal.utf8) else { return false }
            rest = rest.dropFirst(literal.utf8.count)
            return true
        }
        func take(while accepted: (UInt8) -> Bool) -> String {
            let field = rest.prefix(while: accepted)
            rest = rest.dropFirst(field.count)
            return String(decoding: field, as: UTF8.self)
        }
        func isPlain(_ byte: UInt8) -> Bool {
            (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
        }
        guard skip(#"{"genesis": ""#) else { return nil }
        let genesis = take(while: isPlain)
        guard skip(#"", "sequence": "#) else { return nil }
        let digits = take { (48...57).contains($0) }
        guard skip(#", "hash": ""#) else { return nil }
        let hash = take(while: isPlain)
        guard skip(#""}"#), rest.isEmpty, digits == "0" || !digits.hasPrefix("0"), let sequence = Int(digits) else {
            return nil
        }
        return AuditHead(genesis: genesis, sequence: UInt64(sequence), hash: hash)
    }

    /// ``bytes(of:)`` without the JSON renderer, or nil when the genesis or hash holds anything
    /// but ASCII letters and digits (nothing to escape) or the line would not fit.
    private static func plainBytes(of head: AuditHead) -> [UInt8]? {
        func isPlain(_ text: String) -> Bool {
            text.utf8.allSatisfy { (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) }
        }
        guard isPlain(head.genesis), isPlain(head.hash) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(width)
        bytes += #"{"genesis": ""#.utf8
        bytes += head.genesis.utf8
        bytes += #"", "sequence": "#.utf8
        bytes += String(head.sequence).utf8
        bytes += #", "hash": ""#.utf8
        bytes += head.hash.utf8
        bytes += #""}"#.utf8
        guard bytes.count < width else { return nil }
        bytes += repeatElement(32, count: width - 1 - bytes.count)
        bytes.append(10)
        return bytes
    }
}
